/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cross-memory attach refused at run time, for the integration tests: put
 * before the C library (LD_PRELOAD, ranks only), these make every
 * process_vm_readv and process_vm_writev fail with EPERM, as a seccomp
 * profile or a container's policy does where ptrace_scope alone would
 * allow them. Nothing else.
 */
#define _GNU_SOURCE /* process_vm_readv */

#include <errno.h>
#include <sys/uio.h>

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
                         const struct iovec *remote, unsigned long nremote, unsigned long flags)
{
    (void)pid, (void)local, (void)nlocal, (void)remote, (void)nremote, (void)flags;
    errno = EPERM;
    return -1;
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *local, unsigned long nlocal,
                          const struct iovec *remote, unsigned long nremote, unsigned long flags)
{
    (void)pid, (void)local, (void)nlocal, (void)remote, (void)nremote, (void)flags;
    errno = EPERM;
    return -1;
}
