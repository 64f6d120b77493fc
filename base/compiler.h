/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compiler words the hot path uses.
 */
#ifndef AMC_COMPILER_H
#define AMC_COMPILER_H

/* A function of the hot path defined in one file and called from others:
 * with the shared library's link-time optimisation (configure.ac) it is
 * inlined into its callers in the other files, where GCC's own choice kept
 * the call and a frame each (callgrind, an 8 B allreduce at N=2: ~20
 * instructions a call for amc_coll_start and amc_barrier_enter together);
 * without it (the static sanitizer builds) it stays an ordinary call. Its
 * declaration in the header stays plain, so this definition is the
 * external one. */
#define AMC_INLINE_ACROSS __attribute__((always_inline)) inline

#endif
