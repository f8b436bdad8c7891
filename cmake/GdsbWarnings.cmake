# Warnings are attached to our targets only, never to CMAKE_CXX_FLAGS.
add_library(gdsb_warnings INTERFACE)
add_library(gdsb::warnings ALIAS gdsb_warnings)
target_compile_options(gdsb_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion
  -Wformat=2 -Wimplicit-fallthrough)
if(GDSB_WARNINGS_AS_ERRORS)
  target_compile_options(gdsb_warnings INTERFACE -Werror)
endif()
