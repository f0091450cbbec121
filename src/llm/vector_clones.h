// QMM_VECTOR_CLONES: on x86-64 ELF, a function compiled twice, an x86-64-v3 (AVX2, FMA, F16C)
// clone and a baseline clone, chosen at load time by CPU features ("arch=haswell" would instead
// test for that CPU model). Elsewhere one plain function.
#pragma once

#if defined(__x86_64__) && defined(__ELF__)
#define QMM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define QMM_VECTOR_CLONES
#endif

// The clone the loader picks on this CPU: "x86-64-v3", "baseline", or "" (no clones), for --trace.
inline const char* vector_clone_name() {
#if defined(__x86_64__) && defined(__ELF__)
  return __builtin_cpu_supports("x86-64-v3") ? "x86-64-v3" : "baseline";
#else
  return "";
#endif
}
