// Declarations of every variant and packer in the kernel list (one header per file pair),
// generated from each folder (cmake/QmmIsa.cmake's qmm_kernel_folder, build/generated/): the
// scalar references', then the architecture's own.
#pragma once
#include "kernels/kernel_headers_ref.h"
#if defined(__aarch64__)
#include "kernels/kernel_headers_arm.h"
#endif
#if defined(__x86_64__)
#include "kernels/kernel_headers_x86.h"
#endif
