# Warnings are attached to our targets only, never to CMAKE_CXX_FLAGS.
add_library(gdsb_warnings INTERFACE)
add_library(gdsb::warnings ALIAS gdsb_warnings)
target_compile_options(gdsb_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion
  -Wformat=2 -Wimplicit-fallthrough)
if(GDSB_WARNINGS_AS_ERRORS)
  target_compile_options(gdsb_warnings INTERFACE -Werror)
  # GCC 12's flow-sensitive warnings misfire at -O3 inside libstdc++, gtest and
  # nlohmann_json code (GCC bugs 105329 -Wrestrict, 105651, 106199 and friends): they
  # stay on and visible, but do not fail the build with that compiler. GCC 13+ (the GPU
  # machine) and the debug/asan presets keep them as errors.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(gdsb_warnings INTERFACE
      -Wno-error=restrict -Wno-error=null-dereference -Wno-error=maybe-uninitialized
      -Wno-error=array-bounds -Wno-error=stringop-overflow)
  endif()
endif()
