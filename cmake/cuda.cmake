# The optional CUDA backend (SHARDWISE_WITH_CUDA): kernels, cuBLAS/cuBLASLt GEMMs and the NCCL
# communicator in src/runtime/cuda. On when nvcc, cuBLAS and NCCL are found; otherwise a
# configure message says what is missing and the build without it stays complete. Device code
# is compiled for Hopper (sm_90, H100/H200) only, to keep CI's compile time small; set
# CMAKE_CUDA_ARCHITECTURES to add others.
option(SHARDWISE_WITH_CUDA "Build the CUDA compute backend and the NCCL communicator when nvcc is found" ON)
if(SHARDWISE_WITH_CUDA)
  include(CheckLanguage)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(STATUS "shardwise: nvcc not found; the CUDA backend is skipped (install the CUDA toolkit)")
    set(SHARDWISE_WITH_CUDA OFF)
  endif()
endif()
if(SHARDWISE_WITH_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit QUIET)
  find_path(SHARDWISE_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(SHARDWISE_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64
               /usr/local/cuda/lib)
  if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublasLt)
    message(STATUS "shardwise: CUDA toolkit without cuBLASLt; the CUDA backend is skipped")
    set(SHARDWISE_WITH_CUDA OFF)
  elseif(NOT SHARDWISE_NCCL_INCLUDE OR NOT SHARDWISE_NCCL_LIBRARY)
    message(STATUS "shardwise: NCCL not found; the CUDA backend is skipped (install NCCL)")
    set(SHARDWISE_WITH_CUDA OFF)
  else()
    message(STATUS "shardwise: CUDA backend enabled (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                   "sm_${CMAKE_CUDA_ARCHITECTURES}, ${SHARDWISE_NCCL_LIBRARY})")
  endif()
endif()
