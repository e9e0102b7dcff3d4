# Embeds every catalog file under data/ into the library, so the binary needs no data directory
# at run time. The generated source defines shardwise::catalog::EmbeddedFiles().
file(GLOB_RECURSE SHARDWISE_CATALOG_FILES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/data/*.json ${PROJECT_SOURCE_DIR}/data/*.log)
set(SHARDWISE_CATALOG_LIST ${CMAKE_BINARY_DIR}/generated/catalog_files.txt)
file(WRITE ${SHARDWISE_CATALOG_LIST} "${SHARDWISE_CATALOG_FILES}")
set(SHARDWISE_CATALOG_CC ${CMAKE_BINARY_DIR}/generated/embedded_catalog.cc)
add_custom_command(
  OUTPUT ${SHARDWISE_CATALOG_CC}
  COMMAND ${CMAKE_COMMAND} -DOUT=${SHARDWISE_CATALOG_CC} -DROOT=${PROJECT_SOURCE_DIR}/data
          -DLIST=${SHARDWISE_CATALOG_LIST} -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
  DEPENDS ${SHARDWISE_CATALOG_FILES} ${SHARDWISE_CATALOG_LIST}
          ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
  COMMENT "Embedding the catalog (data/)"
  VERBATIM)
