// AArch64: Linux/Android hwcaps from getauxval, Apple from sysctl; SVL from RDSVL.
#include "core/cpu.h"

#if defined(__APPLE__)
#include <sys/sysctl.h>
#else
#include <sys/auxv.h>
#endif

namespace qmm {
namespace {

// RDSVL X0, #1 (streaming vector length in bytes), encoded so that any assembler takes it.
// Only executed when the CPU reports SME.
__attribute__((noinline)) size_t read_svl_bytes() {
  register uint64_t x0 __asm__("x0");
  __asm__ volatile(".inst 0x04bf5820" : "=r"(x0));
  return static_cast<size_t>(x0);
}

#if defined(__APPLE__)
bool sysctl_flag(const char* name) {
  int v = 0;
  size_t len = sizeof(v);
  return sysctlbyname(name, &v, &len, nullptr, 0) == 0 && v != 0;
}

uint32_t platform_features() {
  uint32_t f = kFeatNEON;
  if (sysctl_flag("hw.optional.arm.FEAT_DotProd")) f |= kFeatDotProd;
  if (sysctl_flag("hw.optional.arm.FEAT_I8MM")) f |= kFeatI8MM;
  if (sysctl_flag("hw.optional.arm.FEAT_FP16")) f |= kFeatFP16;
  if (sysctl_flag("hw.optional.arm.FEAT_BF16")) f |= kFeatBF16;
  if (sysctl_flag("hw.optional.arm.FEAT_SME")) f |= kFeatSME;
  if (sysctl_flag("hw.optional.arm.FEAT_SME2")) f |= kFeatSME2;
  return f;
}
#else
// Linux uapi asm/hwcap.h values (stable ABI).
constexpr unsigned long kHwcapAsimdhp = 1ul << 10, kHwcapAsimddp = 1ul << 20, kHwcapSve = 1ul << 22;
constexpr unsigned long kHwcap2Sve2 = 1ul << 1, kHwcap2I8mm = 1ul << 13, kHwcap2Bf16 = 1ul << 14,
                        kHwcap2Sme = 1ul << 23, kHwcap2Sme2 = 1ul << 37;

uint32_t platform_features() {
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  uint32_t f = kFeatNEON;
  if (hw & kHwcapAsimddp) f |= kFeatDotProd;
  if (hw & kHwcapAsimdhp) f |= kFeatFP16;
  if (hw & kHwcapSve) f |= kFeatSVE;
  if (hw2 & kHwcap2Sve2) f |= kFeatSVE2;
  if (hw2 & kHwcap2I8mm) f |= kFeatI8MM;
  if (hw2 & kHwcap2Bf16) f |= kFeatBF16;
  if (hw2 & kHwcap2Sme) f |= kFeatSME;
  if (hw2 & kHwcap2Sme2) f |= kFeatSME2;
  return f;
}
#endif

}  // namespace

CpuInfo detect_cpu() {
  CpuInfo info;
  info.arch = "aarch64";
  info.features = platform_features();
  if (info.features & kFeatSME) info.svl_bytes = read_svl_bytes();
  return info;
}

}  // namespace qmm
