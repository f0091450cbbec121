// Declarations of the Arm variants.
#pragma once
// --- SME2 ---
// --- NEON ---
