// The AVX-512 intrinsics, included without GCC 12's warnings of uninitialised values inside its
// own AVX-512 headers (GCC bug 105593). For the files CMake compiles with AVX-512 enabled.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
