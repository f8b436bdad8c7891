# Every dependency comes from the distribution's packages (ci/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
pkg_check_modules(LIBPCI REQUIRED IMPORTED_TARGET libpci)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(LIBURING REQUIRED IMPORTED_TARGET liburing)
# gdsb-report's history (issue 37) keeps runs in an SQLite file: libsqlite3-dev (CMake's
# FindSQLite3 gives SQLite::SQLite3). Only gdsb_report_history links it.
find_package(SQLite3 REQUIRED)

# CUDA is optional at build time: without it the GPU transfer paths are waived at run
# time with the reason. libcufile and NVML are never linked; they are dlopen'ed.
set(GDSB_HAVE_CUDA OFF)
if(GDSB_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(GDSB_HAVE_CUDA ON)
    message(STATUS "gdsbench: CUDA toolkit ${CUDAToolkit_VERSION} found, GPU paths enabled")
  else()
    message(STATUS "gdsbench: CUDA toolkit not found, GPU paths will be waived")
  endif()
endif()

if(GDSB_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(GDSB_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
