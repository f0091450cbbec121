// x86-64: CPUID for the instruction sets, XGETBV for the OS saving their registers.
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "core/cpu.h"

namespace qmm {
namespace {

uint64_t xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

bool bit(uint32_t reg, int b) { return (reg >> b) & 1u; }

// Linux hands out the AMX tile data state (XFEATURE 18, 8 KiB per thread) only to processes
// that ask: ARCH_REQ_XCOMP_PERM, once for the whole process. Without it the first tile
// instruction is SIGILL, so AMX counts as present only when the request succeeds.
bool request_amx_tiles() {
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

}  // namespace

CpuInfo detect_cpu() {
  CpuInfo info;
  info.arch = "x86_64";
  uint32_t a, b, c, d;
  if (__get_cpuid_max(0x80000000, nullptr) >= 0x80000004) {
    char brand[49] = {};
    for (uint32_t i = 0; i < 3; ++i) {
      __cpuid(0x80000002 + i, a, b, c, d);
      std::memcpy(brand + 16 * i, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
    info.brand = brand;
    while (!info.brand.empty() && info.brand.back() == ' ') info.brand.pop_back();
  }
  if (__get_cpuid_max(0, nullptr) < 7) return info;
  __cpuid_count(1, 0, a, b, c, d);
  const bool osxsave = bit(c, 27);
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool ymm_os = (xcr0 & 0x6) == 0x6;     // XMM + YMM state
  const bool zmm_os = (xcr0 & 0xe6) == 0xe6;   // + opmask, ZMM_Hi256, Hi16_ZMM
  const bool fma = bit(c, 12), f16c = bit(c, 29), avx = bit(c, 28);
  __cpuid_count(7, 0, a, b, c, d);
  const bool avx2 = bit(b, 5), avx512f = bit(b, 16), avx512bw = bit(b, 30), avx512vl = bit(b, 31);
  const bool avx512vnni = bit(c, 11);
  const bool amx_tile = bit(d, 24), amx_int8 = bit(d, 25), amx_bf16 = bit(d, 22);
  const bool tiles_os = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA
  __cpuid_count(7, 1, a, b, c, d);
  const bool avxvnni = bit(a, 4), avx512bf16 = bit(a, 5);
  if (ymm_os && avx) {
    if (avx2) info.features |= kFeatAVX2;
    if (fma) info.features |= kFeatFMA;
    if (f16c) info.features |= kFeatF16C;
    if (avxvnni && avx2) info.features |= kFeatAVXVNNI;
  }
  if (zmm_os && avx512f) {
    info.features |= kFeatAVX512F;
    if (avx512bw) info.features |= kFeatAVX512BW;
    if (avx512vl) info.features |= kFeatAVX512VL;
    if (avx512vnni) info.features |= kFeatAVX512VNNI;
    if (avx512bf16) info.features |= kFeatAVX512BF16;
  }
  // One request for the tile state serves both tile ISAs.
  if (tiles_os && amx_tile && (amx_int8 || amx_bf16) && request_amx_tiles()) {
    if (amx_int8) info.features |= kFeatAMXINT8;
    if (amx_bf16) info.features |= kFeatAMXBF16;
  }
  return info;
}

}  // namespace qmm
