// qmm_abi_call(const AbiCall* call, uint64_t* out): calls a matmul microkernel with known
// values ("canaries") in the registers the AAPCS64 says a callee must preserve (x19-x28 and
// the low 64 bits of v8-v15, i.e. d8-d15), then writes what those registers hold after the
// call to out[0..7] (d8-d15) and out[8..17] (x19-x28). Layout of AbiCall: see test_sme_abi.cpp.
    .text
    .p2align 2
    .globl qmm_abi_call
    .type qmm_abi_call, %function
qmm_abi_call:
    stp x29, x30, [sp, #-176]!
    mov x29, sp
    stp x19, x20, [sp, #16]
    stp x21, x22, [sp, #32]
    stp x23, x24, [sp, #48]
    stp x25, x26, [sp, #64]
    stp x27, x28, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    str x1, [sp, #160]
    // Canaries.
    ldp d8, d9, [x0, #72]
    ldp d10, d11, [x0, #88]
    ldp d12, d13, [x0, #104]
    ldp d14, d15, [x0, #120]
    ldp x19, x20, [x0, #136]
    ldp x21, x22, [x0, #152]
    ldp x23, x24, [x0, #168]
    ldp x25, x26, [x0, #184]
    ldp x27, x28, [x0, #200]
    // Arguments: fn(m, n, k, lhs, rhs, dst, stride, lo, hi).
    ldr x9, [x0, #0]
    ldp s0, s1, [x0, #64]
    ldp x1, x2, [x0, #16]
    ldp x3, x4, [x0, #32]
    ldp x5, x6, [x0, #48]
    ldr x0, [x0, #8]
    blr x9
    ldr x0, [sp, #160]
    stp d8, d9, [x0, #0]
    stp d10, d11, [x0, #16]
    stp d12, d13, [x0, #32]
    stp d14, d15, [x0, #48]
    stp x19, x20, [x0, #64]
    stp x21, x22, [x0, #80]
    stp x23, x24, [x0, #96]
    stp x25, x26, [x0, #112]
    stp x27, x28, [x0, #128]
    ldp x19, x20, [sp, #16]
    ldp x21, x22, [sp, #32]
    ldp x23, x24, [sp, #48]
    ldp x25, x26, [sp, #64]
    ldp x27, x28, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    ldp x29, x30, [sp], #176
    ret
    .size qmm_abi_call, .-qmm_abi_call
    .section .note.GNU-stack,"",%progbits
