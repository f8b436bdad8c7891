# The .deb and .rpm of gdsbench (CPack), built by ci/package.sh from the release build:
#   cd build/release && cpack -G "DEB;RPM" -B packages
# Runtime dependencies are read from the binaries themselves (dpkg-shlibdeps for the .deb,
# rpm's automatic requirements for the .rpm): on Debian 12 libpci3, libhwloc15, liburing2, libsqlite3-0,
# libstdc++6, libgcc-s1 and libc6. The CUDA runtime is linked statically; libcuda, cuFile
# and NVML are loaded at run time when present, so the package asks for no NVIDIA package.
set(CPACK_PACKAGE_NAME gdsbench)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "gdsbench")
set(CPACK_PACKAGE_CONTACT "the gdsbench project")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "storage-to-GPU path benchmark and diagnostics (gdsio/gdscheck analogue)")
set(CPACK_PACKAGE_DESCRIPTION
    "gdsb-io measures storage <-> CPU/GPU transfers (gdsio-compatible), gdsb-topo checks the
PCIe topology for GPUDirect Storage, gdsb-p2p reports GPU peer-to-peer capabilities and
copy bandwidth, gdsb-report renders HTML reports, comparisons and CI gates.
The CUDA runtime is linked statically; the NVIDIA driver, cuFile (GPUDirect Storage) and
NVML are loaded at run time when present, and what cannot run without them is reported
as waived with the reason.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_CHECKSUM SHA256)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")

set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_LICENSE "Apache-2.0 AND BSD-3-Clause AND MIT")
set(CPACK_RPM_USER_FILELIST "%license ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}/LICENSE")
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_PACKAGE_AUTOREQ ON)
set(CPACK_RPM_PACKAGE_AUTOPROV OFF)
# /usr/share/man/man1 and the completion directory belong to the system's packages.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/share/man /usr/share/man/man1 /usr/share/bash-completion
    /usr/share/bash-completion/completions)

set(CPACK_GENERATOR DEB)
find_program(GDSB_RPMBUILD rpmbuild)
if(GDSB_RPMBUILD)
  list(APPEND CPACK_GENERATOR RPM)
endif()
# Packing takes what the release build made (ci/package.sh builds target gdsb_installed
# first); it must not build the whole project, tests and benchmarks, a second time.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)
