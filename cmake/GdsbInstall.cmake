# Installing the tools: `cmake --install build/release [--prefix DIR]`, and the .deb/.rpm
# of cmake/GdsbPackage.cmake. One call per tool, gdsb_install_tool(<target>), installs
# its binary, its man page and its bash completion; the two are generated at build time
# by running the built tool with the hidden --gdsb-man-page / --gdsb-bash-completion flags
# (gdsb::cli, apps/common), so they list exactly the options --help lists.
include(GNUInstallDirs)
set(GDSB_BASH_COMPLETION_DIR "${CMAKE_INSTALL_DATADIR}/bash-completion/completions"
    CACHE STRING "Where bash completion scripts are installed, relative to the prefix")

function(gdsb_install_tool target)
  set(out "${PROJECT_BINARY_DIR}/generated")
  set(man "${out}/man1/${target}.1.gz")
  set(completion "${out}/bash-completion/${target}")
  add_custom_command(
    OUTPUT "${man}" "${completion}"
    COMMAND "${CMAKE_COMMAND}" "-DTOOL=$<TARGET_FILE:${target}>" "-DMAN=${man}"
            "-DCOMPLETION=${completion}" -P "${PROJECT_SOURCE_DIR}/cmake/GdsbToolDocs.cmake"
    DEPENDS ${target} "${PROJECT_SOURCE_DIR}/cmake/GdsbToolDocs.cmake"
    COMMENT "Writing the man page and bash completion of ${target}"
    VERBATIM)
  add_custom_target(${target}_docs ALL DEPENDS "${man}" "${completion}")
  add_dependencies(gdsb_installed ${target} ${target}_docs)
  set_property(GLOBAL APPEND PROPERTY GDSB_INSTALLED_TOOLS ${target})  # tests/package
  install(TARGETS ${target} RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  install(FILES "${man}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
  install(FILES "${completion}" DESTINATION "${GDSB_BASH_COMPLETION_DIR}")
endfunction()

# Everything the install rules take, without the tests and benchmarks: ci/package.sh
# builds this, then packs.
add_custom_target(gdsb_installed)

# The license: LICENSE (Apache-2.0) and, where Debian looks for it, the machine-readable
# copyright file naming what the binaries compile in (packaging/copyright); the .rpm marks
# LICENSE as %license (cmake/GdsbPackage.cmake).
install(FILES README.md LICENSE packaging/copyright DESTINATION "${CMAKE_INSTALL_DOCDIR}")
# Slurm: the batch template of gdsb-cluster, the HealthCheckProgram wrapper and the NHC rule
# of gdsb-topo --health (README, docs/gdsb-cluster.md, docs/gdsb-topo.md).
install(PROGRAMS slurm/gdsb-cluster.sbatch slurm/gdsb-healthcheck
        DESTINATION "${CMAKE_INSTALL_DATADIR}/gdsbench/slurm")
install(FILES slurm/nhc.conf DESTINATION "${CMAKE_INSTALL_DATADIR}/gdsbench/slurm")
install(DIRECTORY docs/ DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs")
