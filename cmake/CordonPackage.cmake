# libcordon.so, installation (binary, library, headers, pkg-config, CMake package) and the
# Debian package. Included at the end of the top-level CMakeLists.txt, after every module exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every library module goes into the shared library. The CLI and the MCP server are programs
# built on the library, not part of its API, so they stay out.
set(cordon_library_modules core net config policy plan linux limits zygote bwrap seatbelt exec session
  worktree report capi)
set(cordon_library_objects)
foreach(module ${cordon_library_modules})
  if(TARGET cordon_${module})
    # Static module libraries are compiled with POSITION_INDEPENDENT_CODE, so their objects can
    # be linked into a shared library as they are (no second compilation).
    list(APPEND cordon_library_objects $<TARGET_OBJECTS:cordon_${module}>)
  endif()
endforeach()

add_library(cordon_shared SHARED ${cordon_library_objects})
add_library(cordon::cordon ALIAS cordon_shared)
set_target_properties(cordon_shared PROPERTIES
  OUTPUT_NAME cordon
  EXPORT_NAME cordon
  VERSION ${PROJECT_VERSION}
  SOVERSION 0
  LINKER_LANGUAGE CXX)
target_include_directories(cordon_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# The objects' own dependencies (shared system libraries; nlohmann_json is header-only).
target_link_libraries(cordon_shared PRIVATE PkgConfig::RE2 PkgConfig::LDNS fmt::fmt)
if(CORDON_LINUX)
  target_link_libraries(cordon_shared PRIVATE PkgConfig::SECCOMP)
endif()
# A library with undefined symbols would only fail in the consumer's link: fail here instead.
# (GNU ld's spelling; Apple's linker reports undefined symbols by default.)
if(NOT APPLE)
  target_link_options(cordon_shared PRIVATE -Wl,--no-undefined)
endif()

install(TARGETS cordon_shared EXPORT cordonTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Public headers only: include/cordon/ is the public API by definition (src/ headers are not).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cordon
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

# CMake package: find_package(cordon) -> target cordon::cordon.
set(cordon_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)
install(EXPORT cordonTargets NAMESPACE cordon:: DESTINATION ${cordon_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cordonConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cordonConfig.cmake
  INSTALL_DESTINATION ${cordon_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor bump may break the API
install(FILES ${PROJECT_BINARY_DIR}/cordonConfig.cmake ${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  DESTINATION ${cordon_cmake_dir})

# pkg-config: the prefix is computed from the .pc file's own location, so the same file works
# after `cmake --install --prefix ANY` and from the Debian package.
file(RELATIVE_PATH cordon_pc_to_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" cordon_pc_to_prefix "${cordon_pc_to_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/cordon.pc.in ${PROJECT_BINARY_DIR}/cordon.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cordon.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The bwrap backend's in-sandbox trampoline: found at <bindir>/../libexec/cordon/ by the cordon
# binary (src/bwrap/launch.cc, LocateTrampoline).
if(TARGET cordon-bwrap-exec)
  install(TARGETS cordon-bwrap-exec RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon)
endif()
# `cordon`: the front in bin/ and the full executable in libexec/cordon/, where the front finds
# it (decision 0028); without a front, the full executable is bin/cordon.
if(CORDON_COMMAND_TARGET STREQUAL "cordon-front")
  install(TARGETS cordon-front RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS cordon RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon)
else()
  install(TARGETS cordon RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The sandbox's init once the command runs (src/linux/init_reaper.h), found the same way.
if(TARGET cordon-init)
  install(TARGETS cordon-init RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon)
endif()
# The resolver of network-by-domain runs (src/linux/resolver_program.h), found the same way.
if(TARGET cordon-resolver)
  install(TARGETS cordon-resolver RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon)
endif()

# The man page and the shell completions, generated at build time from the binary's own CLI11
# definitions (src/cli/CMakeLists.txt, `cordon __generate`). Paths as Debian's man-db,
# bash-completion (loads completions/<command> on demand) and zsh (vendor-completions is on
# its default $fpath) expect them.
if(TARGET cordon_manual)
  install(FILES ${CORDON_GENERATED_DIR}/cordon.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${CORDON_GENERATED_DIR}/cordon.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME cordon)
  install(FILES ${CORDON_GENERATED_DIR}/_cordon
    DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
endif()

# Debian package: cordon_<version>_<arch>.deb with the binary, the library, the headers, the man
# page and the completions.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cordon)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "cordon maintainers <cordon@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # cordon_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# Runtime dependencies from the ELF files themselves (dpkg-shlibdeps): libre2-9, libseccomp2,
# libfmt9, libstdc++6 and libc6 on Debian 12, with the right minimum versions. They come from
# libcordon.so: the cordon executables are static PIEs (decision 0024), so this package must be
# rebuilt when glibc, libstdc++, RE2 or libseccomp get a security fix.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
include(CPack)
