// cordon-init's exec mode (docs/decisions/0023-prepared-commands.md):
//
//   cordon-init --exec REQUEST_FD
//
// What a prepared sandbox's command process execs once every layer is in force (capabilities
// dropped, no_new_privs, Landlock, seccomp): it waits on REQUEST_FD for one command
// (linux/exec_wire.h), puts the received descriptors on 0, 1 and 2, changes to the
// command's directory and execs it. Nothing it does needs a privilege or a system call the
// sandbox removed; everything it received came from the supervisor. Libc only, no heap.
#pragma once

namespace cordon::linux_native {

// Never returns: execs the command, or reports an ExecFailure on `request_fd` and exits 127
// (126 when even that report cannot be written).
[[noreturn]] void RunExecStub(int request_fd);

}  // namespace cordon::linux_native
