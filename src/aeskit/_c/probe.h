/*
 * probe.h: the CPU measurements of the benchmark (probe.c), Python-free.
 * Cycles are core cycles: each probe is timed against a chain of dependent
 * adds, one cycle each.
 */
#ifndef AESKIT_PROBE_H
#define AESKIT_PROBE_H

#include <stddef.h>
#include <stdint.h>

uint64_t aeskit_now_ns(void);   /* CLOCK_MONOTONIC; on Windows QueryPerformanceCounter */

/* The core clock in MHz from an add chain run for about ms milliseconds;
 * 0 where it cannot be measured (no x86). */
double aeskit_probe_clock_mhz(double ms);

/* The add chain's clock cross-checked, over about ms milliseconds: the add
 * chain and a chain of 64-bit multiplies (3 cycles each) interleaved, each
 * at its fastest run, both in MHz of the core clock, and the TSC's rate over
 * the same interval (a fixed nominal rate, not the core's: information
 * only). 1 when measured, 0 where it cannot be (no x86). */
int aeskit_probe_clock_check(double ms, double *add_mhz, double *mul_mhz, double *tsc_mhz);

/* Core cycles per 128-bit AESENC in one dependent chain (latency) and over
 * 8 independent chains (reciprocal throughput); 0 without AES-NI. */
int aeskit_probe_aes(double *latency, double *xmm);
/* Nanoseconds per AESENC over independent blocks, the fastest of rounds short
 * runs; 0 without AES-NI. */
double aeskit_probe_aes_share(int rounds);

/* The unit probes: core cycles per instruction over 8 independent chains
 * for VAES on ymm and zmm and carry-less multiply on xmm, ymm and zmm, and
 * per AES-128 GCM batch mix (80 AES rounds with 24 multiplies) on each
 * width; cycles[i] < 0 where the CPU or OS lacks it. Names by index. */
size_t aeskit_probe_unit_count(void);
const char *aeskit_probe_unit_name(size_t i);
void aeskit_probe_units(double *cycles);   /* aeskit_probe_unit_count() of them */

#endif
