// Stand-in for the instruction-modifier constants of SFPI's sfpi_hw.h that tt-metal's LLK
// headers name (sfpi::SFPLOADI_MOD0_FLOATB, ...). The values are Wormhole's; nothing here
// is ever encoded into an instruction (the host check compiles with -fsyntax-only), they
// only need to be integral constants.
#pragma once

namespace sfpi {

constexpr unsigned int SFP_LREG_COUNT = 8;
constexpr unsigned int SFP_DESTREG_STRIDE = 2;

constexpr unsigned int SFPLOAD_MOD0_FMT_SRCB = 0;
constexpr unsigned int SFPLOAD_MOD0_FMT_FP16A = 1;
constexpr unsigned int SFPLOAD_MOD0_FMT_FP16B = 2;
constexpr unsigned int SFPLOAD_MOD0_FMT_FP32 = 3;
constexpr unsigned int SFPLOAD_MOD0_FMT_SM32 = 12;
constexpr unsigned int SFPLOAD_ADDR_MODE_NOINC = 3;

constexpr unsigned int SFPSTORE_MOD0_FMT_SRCB = 0;
constexpr unsigned int SFPSTORE_MOD0_FMT_FP16A = 1;
constexpr unsigned int SFPSTORE_MOD0_FMT_FP16B = 2;
constexpr unsigned int SFPSTORE_MOD0_FMT_FP32 = 3;
constexpr unsigned int SFPSTORE_MOD0_FMT_UINT16 = 6;
constexpr unsigned int SFPSTORE_MOD0_FMT_LO16 = 6;
constexpr unsigned int SFPSTORE_MOD0_FMT_SM32 = 12;
constexpr unsigned int SFPSTORE_ADDR_MODE_NOINC = 3;

constexpr unsigned int SFPMOV_MOD1_COMPSIGN = 1;
constexpr unsigned int SFPMOV_MOD1_NEGATE = 1;

constexpr unsigned int SFPMAD_MOD1_OFFSET_NONE = 0;
constexpr unsigned int SFPMAD_MOD1_NEGATE_VA = 1;
constexpr unsigned int SFPMAD_MOD1_NEGATE_VC = 2;
constexpr unsigned int SFPMAD_MOD1_INDIRECT_VA = 4;
constexpr unsigned int SFPMAD_MOD1_INDIRECT_VD = 8;

constexpr unsigned int SFPLOADI_MOD0_FLOATB = 0;
constexpr unsigned int SFPLOADI_MOD0_FLOATA = 1;
constexpr unsigned int SFPLOADI_MOD0_USHORT = 2;
constexpr unsigned int SFPLOADI_MOD0_SHORT = 4;
constexpr unsigned int SFPLOADI_MOD0_UPPER = 8;
constexpr unsigned int SFPLOADI_MOD0_LOWER = 10;

constexpr unsigned int SFPEXMAN_MOD1_PAD8 = 0;
constexpr unsigned int SFPEXMAN_MOD1_PAD9 = 1;

constexpr unsigned int SFPEXEXP_MOD1_DEBIAS = 0;
constexpr unsigned int SFPEXEXP_MOD1_NODEBIAS = 1;
constexpr unsigned int SFPEXEXP_MOD1_SET_CC_SGN_EXP = 2;
constexpr unsigned int SFPEXEXP_MOD1_SET_CC_COMP_EXP = 8;
constexpr unsigned int SFPEXEXP_MOD1_SET_CC_SGN_COMP_EXP = 10;

constexpr unsigned int SFPABS_MOD1_INT = 0;
constexpr unsigned int SFPABS_MOD1_FLOAT = 1;

constexpr unsigned int SFPIADD_MOD1_ARG_LREG_DST = 0;
constexpr unsigned int SFPIADD_MOD1_ARG_IMM = 1;
constexpr unsigned int SFPIADD_MOD1_ARG_2SCOMP_LREG_DST = 2;
constexpr unsigned int SFPIADD_MOD1_CC_LT0 = 0;
constexpr unsigned int SFPIADD_MOD1_CC_NONE = 4;
constexpr unsigned int SFPIADD_MOD1_CC_GTE0 = 8;

constexpr unsigned int SFPSETCC_MOD1_LREG_LT0 = 0;
constexpr unsigned int SFPSETCC_MOD1_IMM_BIT0 = 1;
constexpr unsigned int SFPSETCC_MOD1_LREG_NE0 = 2;
constexpr unsigned int SFPSETCC_MOD1_LREG_GTE0 = 4;
constexpr unsigned int SFPSETCC_MOD1_LREG_EQ0 = 6;
constexpr unsigned int SFPSETCC_MOD1_COMP = 8;

constexpr unsigned int SFPENCC_IMM12_NEITHER = 0;
constexpr unsigned int SFPENCC_IMM12_BOTH = 3;
constexpr unsigned int SFPENCC_MOD1_EU_R1 = 0;
constexpr unsigned int SFPENCC_MOD1_EC_R1 = 1;
constexpr unsigned int SFPENCC_MOD1_EI_R1 = 2;
constexpr unsigned int SFPENCC_MOD1_EU_RI = 8;
constexpr unsigned int SFPENCC_MOD1_EC_RI = 9;
constexpr unsigned int SFPENCC_MOD1_EI_RI = 10;

constexpr unsigned int SFPLZ_MOD1_CC_NONE = 0;
constexpr unsigned int SFPLZ_MOD1_CC_NE0 = 2;
constexpr unsigned int SFPLZ_MOD1_CC_COMP = 8;
constexpr unsigned int SFPLZ_MOD1_CC_EQ0 = 10;

constexpr unsigned int SFPSETSGN_MOD1_ARG_IMM = 1;
constexpr unsigned int SFPSETEXP_MOD1_ARG_EXPONENT = 2;
constexpr unsigned int SFPSHFT_MOD1_ARG_IMM = 1;
constexpr unsigned int SFPSHFT_MOD1_ARG_IMM_USE_VC = 5;
constexpr unsigned int SFPSHFT_MOD1_SHIFT_IMM = 1;

constexpr unsigned int SFPGT_MOD1_SET_CC = 1;
constexpr unsigned int SFPGT_MOD1_SET_VD = 2;
constexpr unsigned int SFPGT_MOD1_SET_ALL_ONES = 4;
constexpr unsigned int SFPLE_MOD1_SET_CC = 1;
constexpr unsigned int SFPLE_MOD1_SET_VD = 2;

constexpr unsigned int SFPARECIP_MOD1_RECIP = 0;
constexpr unsigned int SFPMUL24_MOD1_LOWER = 0;
constexpr unsigned int SFPMUL24_MOD1_UPPER = 1;

constexpr unsigned int SFPCAST_MOD1_INT32_TO_FP32_RNE = 0;
constexpr unsigned int SFPCAST_MOD1_INT32_TO_FP32_RNS = 1;
constexpr unsigned int SFPCAST_MOD1_SM32_TO_FP32_RNE = 0;

constexpr unsigned int SFPSTOCHRND_RND_EVEN = 0;
constexpr unsigned int SFPSTOCHRND_RND_STOCH = 1;
constexpr unsigned int SFPSTOCHRND_MOD1_FP32_TO_FP16A = 0;
constexpr unsigned int SFPSTOCHRND_MOD1_FP32_TO_FP16B = 1;
constexpr unsigned int SFPSTOCHRND_MOD1_FP32_TO_UINT8 = 2;
constexpr unsigned int SFPSTOCHRND_MOD1_FP32_TO_INT8 = 3;
constexpr unsigned int SFPSTOCHRND_MOD1_INT32_TO_UINT8 = 4;
constexpr unsigned int SFPSTOCHRND_MOD1_INT32_TO_INT8 = 5;
constexpr unsigned int SFPSTOCHRND_MOD1_FP32_TO_UINT16 = 6;
constexpr unsigned int SFPSTOCHRND_MOD1_FP32_TO_INT16 = 7;

constexpr unsigned int SFPSHFT2_MOD1_COPY4 = 0;
constexpr unsigned int SFPSHFT2_MOD1_SUBVEC_CHAINED_COPY4 = 1;
constexpr unsigned int SFPSHFT2_MOD1_SUBVEC_SHFLROR1_AND_COPY4 = 2;
constexpr unsigned int SFPSHFT2_MOD1_SUBVEC_SHFLROR1 = 3;
constexpr unsigned int SFPSHFT2_MOD1_SUBVEC_SHFLSHR1 = 4;
constexpr unsigned int SFPSHFT2_MOD1_SHFT_LREG = 5;
constexpr unsigned int SFPSHFT2_MOD1_SHFT_IMM = 6;

constexpr unsigned int SFPSWAP_MOD1_SWAP = 0;
constexpr unsigned int SFPSWAP_MOD1_VEC_MIN_MAX = 1;

constexpr unsigned int SFPCONFIG_DEST_LREG11 = 11;

}  // namespace sfpi
