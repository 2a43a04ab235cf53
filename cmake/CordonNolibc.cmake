# cordon_nolibc_executable(NAME SOURCES...): an executable without a C library (src/nolibc,
# decision 0028): compiled freestanding, linked as a static PIE with no start-up code, no
# relocations (scripts/check_no_relocations.sh) and never a sanitizer (its runtime needs a C
# library; the sanitizer builds' flags come first and are turned off here). x86_64 and aarch64.
set(CORDON_NOLIBC_SUPPORTED OFF)
if(CORDON_LINUX AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|aarch64|arm64)$")
  set(CORDON_NOLIBC_SUPPORTED ON)
endif()

function(cordon_nolibc_executable name)
  add_executable(${name} ${ARGN} ${PROJECT_SOURCE_DIR}/src/nolibc/mem.cc)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE
    -ffreestanding -fno-builtin -fno-exceptions -fno-rtti -fno-stack-protector
    -fno-sanitize=all -fPIE -fno-asynchronous-unwind-tables -fno-unwind-tables
    -Wall -Wextra -Werror $<$<CXX_COMPILER_ID:GNU>:-fno-tree-loop-distribute-patterns>)
  target_link_options(${name} PRIVATE -nostdlib -static-pie -fno-sanitize=all
    -Wl,--gc-sections -Wl,-z,noexecstack)
  # Whatever the flags (say -Os, which may put a table of pointers into relocated data), an
  # executable that would need a relocation fails the build: nothing would apply it.
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/check_no_relocations.sh $<TARGET_FILE:${name}>
    VERBATIM)
endfunction()
