// Declarations of the Arm variants.
#pragma once
