# Arm kernel sources, each ISA with its own flags (cmake/QmmIsa.cmake).
# --- SME2 ---
# --- NEON ---
