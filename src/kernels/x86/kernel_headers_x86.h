// Declarations of the x86 variants.
#pragma once
