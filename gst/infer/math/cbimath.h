/* cudabatchinfer: the per-element math of the CUDA kernels
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What one thread of a kernel computes for one element: byte <-> float
 * mappings, element-wise and binary ops, index mappings of Pad, Resize,
 * Transpose and broadcasting. The kernels call these functions and do no
 * such math of their own, so tests/check/kernels/math.c checks on any
 * machine, with gcc, what the GPU runs. C11 and CUDA C++ both: under nvcc
 * every function is __host__ __device__; nothing here includes a CUDA
 * header.
 *
 * The semantics are the CPU backend's, NaN and infinities included: its
 * packing, unpacking (gst/infer/cpu/frames.c) and Pad loop
 * (gst/infer/cpu/loops.c) call these same functions; for the
 * element-wise ops and linear resampling (half-pixel centres) they follow
 * oneDNN's definitions.
 */
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CBI_HD __host__ __device__ static inline
#else
#define CBI_HD static inline
#endif

#ifdef __cplusplus
extern "C"
{
#endif

#define CBI_K_MAX_DIMS 6

/* Each enum below ends with a _RANGE member, INT_MIN, no op of its own:
 * in C++ (nvcc, the kernels' host build) an enum holds only the values of
 * its smallest bit-field, and a launcher handed another one (a caller's
 * bug it must refuse) would read it as undefined behaviour before it
 * could refuse it; with the member every int is in range. */

/**
 * CbiKEltwise:
 * The element-wise ops, as the engine's graph defines them.
 */
typedef enum
{
  CBI_K_RELU,                   /* alpha: negative slope (LeakyRelu) */
  CBI_K_SIGMOID,
  CBI_K_TANH,
  CBI_K_CLIP,                   /* min alpha, max beta */
  CBI_K_ELU,                    /* alpha */
  CBI_K_HARD_SIGMOID,           /* max (0, min (1, alpha x + beta)) */
  CBI_K_HARD_SWISH,             /* x relu6 (x + 3) / 6 */
  CBI_K_IDENTITY,
  CBI_K_ERF,
  CBI_K_GELU_ERF,               /* x (1 + erf (x / sqrt 2)) / 2 */
  CBI_K_GELU_TANH,              /* x (1 + tanh (sqrt (2 / pi) (x + 0.044715
                                 * x^3))) / 2 */
  CBI_K_SQRT,
  CBI_K_EXP,
  CBI_K_LOG,
  CBI_K_NEG,
  CBI_K_ABS,
  CBI_K_RECIPROCAL,
  CBI_K_POW,                    /* x ^ alpha */
  CBI_K_LINEAR,                 /* alpha x + beta */
  CBI_K_SWISH,                  /* x sigmoid (alpha x): SiLU at alpha 1 */
  CBI_K_ELTWISE_RANGE = -0x7fffffff - 1,
} CbiKEltwise;

/* the last CbiKEltwise, for range checks */
#define CBI_K_ELTWISE_LAST CBI_K_SWISH

typedef enum
{
  CBI_K_ADD,
  CBI_K_SUB,
  CBI_K_MUL,
  CBI_K_DIV,
  CBI_K_PRELU,                  /* a > 0 ? a : a x b */
  CBI_K_MIN,
  CBI_K_MAX,
  CBI_K_POWER,                  /* a ^ b */
  CBI_K_BINARY_RANGE = -0x7fffffff - 1,
} CbiKBinary;

/* the last CbiKBinary, for range checks */
#define CBI_K_BINARY_LAST CBI_K_POWER

typedef enum
{
  CBI_K_REDUCE_MEAN,
  CBI_K_REDUCE_SUM,
  CBI_K_REDUCE_MAX,
  CBI_K_REDUCE_ARGMAX,          /* the index of the first maximum */
  CBI_K_REDUCE_ARGMAX_LAST,     /* the index of the last one */
  CBI_K_REDUCE_RANGE = -0x7fffffff - 1,
} CbiKReduce;

typedef enum
{
  CBI_K_PAD_CONSTANT,
  CBI_K_PAD_REFLECT,
  CBI_K_PAD_EDGE,
  CBI_K_PAD_RANGE = -0x7fffffff - 1,
} CbiKPadFill;

/**
 * CbiKHalf:
 * The 16-bit types a convolution of a low-precision plan reads and
 * writes: IEEE binary16 (fp16: 10 mantissa bits, largest finite 65504)
 * or bfloat16 (bf16: float32's exponent, 7 mantissa bits).
 */
typedef enum
{
  CBI_K_HALF_FP16,
  CBI_K_HALF_BF16,
  CBI_K_HALF_RANGE = -0x7fffffff - 1,
} CbiKHalf;

/* ---- float32 <-> 16-bit floats --------------------------------------- */

CBI_HD uint32_t
cbi_float_bits (float f)
{
#ifdef __CUDA_ARCH__
  return __float_as_uint (f);
#else
  uint32_t u;
  memcpy (&u, &f, sizeof u);
  return u;
#endif
}

CBI_HD float
cbi_bits_float (uint32_t u)
{
#ifdef __CUDA_ARCH__
  return __uint_as_float (u);
#else
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
#endif
}

/* @f rounded to the nearest binary16, ties to even: past 65504 by half a
 * step or more (65520) it is infinite, below 2^-14 subnormal; NaN stays
 * NaN (quiet). Integer math but for the subnormals, so a GPU gives these
 * bits too. */
CBI_HD uint16_t
cbi_fp16_from_float (float f)
{
  const uint32_t x = cbi_float_bits (f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;

  if (ax > 0x7f800000u)         /* NaN */
    return (uint16_t) (sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u)        /* 65520 and up, infinity */
    return (uint16_t) (sign | 0x7c00u);
  if (ax >= 0x38800000u) {      /* 2^-14 and up: normal */
    /* the 13 dropped bits rounded to nearest, ties to the even bit kept;
     * a carry into the exponent is the right result */
    const uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u);
    return (uint16_t) (sign | ((r - 0x38000000u) >> 13));
  }
  /* subnormal or zero: adding 0.5 leaves the value's multiples of 2^-24
   * in the low mantissa bits, rounded by the float unit to nearest even */
  return (uint16_t) (sign | (cbi_float_bits (cbi_bits_float (ax) + 0.5f)
          - 0x3f000000u));
}

/* binary16 @h as a float, exactly */
CBI_HD float
cbi_fp16_to_float (uint16_t h)
{
  const uint32_t sign = ((uint32_t) h & 0x8000u) << 16;
  const uint32_t e = ((uint32_t) h >> 10) & 0x1fu;
  const uint32_t m = (uint32_t) h & 0x3ffu;

  if (e == 0x1fu)
    return cbi_bits_float (sign | 0x7f800000u | (m << 13));
  if (e == 0)                   /* m x 2^-24: exact in float */
    return cbi_bits_float (sign | cbi_float_bits ((float) m * 5.9604644775390625e-8f));
  return cbi_bits_float (sign | ((e + 112u) << 23) | (m << 13));
}

/* @f rounded to the nearest bfloat16, ties to even; NaN stays NaN */
CBI_HD uint16_t
cbi_bf16_from_float (float f)
{
  const uint32_t x = cbi_float_bits (f);

  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t) ((x >> 16) | 0x40u);
  return (uint16_t) ((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

CBI_HD float
cbi_bf16_to_float (uint16_t b)
{
  return cbi_bits_float ((uint32_t) b << 16);
}

CBI_HD uint16_t
cbi_half_from_float (CbiKHalf type, float f)
{
  return type == CBI_K_HALF_BF16 ? cbi_bf16_from_float (f) :
      cbi_fp16_from_float (f);
}

CBI_HD float
cbi_half_to_float (CbiKHalf type, uint16_t h)
{
  return type == CBI_K_HALF_BF16 ? cbi_bf16_to_float (h) :
      cbi_fp16_to_float (h);
}

/* ---- bytes <-> floats ------------------------------------------------ */

/* a x b + c, rounded after the product and after the sum: never one
 * fused multiply-add, as on the CPU (gcc does not contract in ISO C), so
 * the byte mappings give the CPU's values bit for bit. */
CBI_HD float
cbi_mul_add (float a, float b, float c)
{
#ifdef __CUDA_ARCH__
  return __fadd_rn (__fmul_rn (a, b), c);
#else
  return a * b + c;
#endif
}

/* Packing: value = byte x scale + bias. */
CBI_HD float
cbi_from_byte (uint8_t byte, float scale, float bias)
{
  return cbi_mul_add ((float) byte, scale, bias);
}

/* The inverse mapping of (@scale, @bias) as unpacking applies it:
 * byte = v x inv + off, inv = 1 / scale, off = -bias / scale. */
CBI_HD void
cbi_byte_mapping (float scale, float bias, float *inv, float *off)
{
  *inv = 1.0f / scale;
  *off = -bias * *inv;
}

/* Unpacking: v x @inv + @off rounded half up and clamped to 0..255; NaN
 * gives 0. */
CBI_HD uint8_t
cbi_to_byte (float v, float inv, float off)
{
  float s = cbi_mul_add (v, inv, off) + 0.5f;

  if (!(s > 0.0f))              /* also catches NaN */
    return 0;
  if (s >= 255.0f)
    return 255;
  return (uint8_t) s;
}

/* Packing a batch: the frame whose pixels fill slot @slot, or -1 for a
 * slot of zeros. */
CBI_HD int64_t
cbi_pack_source (int64_t slot, int64_t n_frames, int repeat_last)
{
  if (slot < n_frames)
    return slot;
  return repeat_last && n_frames > 0 ? n_frames - 1 : -1;
}

/**
 * CbiUnpackMap:
 * @src: per byte of a pixel (colour bytes 0, 1, 2 in model channel order,
 *   then the fourth byte) the channel it reads
 * @inv: its scale: byte = value x @inv + @off
 * @off: its offset
 * @channels: channels of the tensor, 1, 3 or 4
 *
 * Where unpacking reads each byte of a pixel: grey (one channel) goes to
 * every colour byte through channel 0's mapping; a fourth channel is
 * scaled as channel 0, without offset.
 */
typedef struct
{
  int src[4];
  float inv[4];
  float off[4];
  int channels;
} CbiUnpackMap;

/* The map for a tensor of @channels whose model channel c becomes bytes
 * value x @out_scale[c] + @out_offset[c]. */
CBI_HD void
cbi_unpack_map_init (CbiUnpackMap * m, int channels, const float *out_scale,
    const float *out_offset)
{
  int c;

  m->channels = channels;
  for (c = 0; c < 4; c++) {
    int k = channels == 1 || c == 3 ? 0 : c;
    m->src[c] = channels == 1 ? 0 : c;
    m->inv[c] = out_scale[k];
    m->off[c] = c == 3 ? 0.0f : out_offset[k];
  }
}

/* ---- Y'CbCr 4:2:0 ---------------------------------------------------- */

/* Inward the arithmetic is GStreamer videoconvert's 8-bit I420 to RGB
 * path, step for step (each byte less 128 spread to 16 bits, multiplied
 * by a coefficient keeping the high 16 bits, summed, saturated), so that
 * frames packed from 4:2:0 equal frames videoconvert turned to RGB first,
 * byte for byte. The coefficients, in 1/256, are CbiYuvMatrix's to_rgb
 * (cbitypes.h), made by cbi_yuv_matrix_init (). */

/* One byte's term: (@byte - 128) spread to 16 bits (its two's complement
 * byte repeated), times @k, the high 16 bits. */
CBI_HD int32_t
cbi_yuv_term (int32_t byte, int32_t k)
{
  const int32_t s = byte - 128;

  return ((s * 257 + (s < 0 ? 256 : 0)) * k) >> 16;
}

/* A sum of terms saturated to a signed byte, then 128 added back. */
CBI_HD uint8_t
cbi_yuv_clamp (int32_t v)
{
  v = v < -128 ? -128 : v > 127 ? 127 : v;
  return (uint8_t) (v + 128);
}

/* The R'G'B' bytes of luma @y and chroma @u (Cb) and @v (Cr). */
CBI_HD void
cbi_yuv_to_rgb (const int32_t * k, int32_t y, int32_t u, int32_t v,
    uint8_t rgb[3])
{
  const int32_t l = cbi_yuv_term (y, k[0]);

  rgb[0] = cbi_yuv_clamp (l + cbi_yuv_term (v, k[1]));
  rgb[1] = cbi_yuv_clamp (l + cbi_yuv_term (u, k[3]) + cbi_yuv_term (v,
          k[4]));
  rgb[2] = cbi_yuv_clamp (l + cbi_yuv_term (u, k[2]));
}

/* Outward: R'G'B' bytes @r @g @b to a luma or chroma byte by @k (in
 * 1/256: the weights of red, green, blue, then the offset), truncated and
 * clamped as videoconvert's 8-bit matrix does. */
CBI_HD uint8_t
cbi_rgb_to_yuv (const int32_t * k, int32_t r, int32_t g, int32_t b)
{
  const int32_t v = (k[0] * r + k[1] * g + k[2] * b + k[3]) >> 8;

  return (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
}

/* ---- exponential ------------------------------------------------------ */

/* e^@x in plain arithmetic that a compiler vectorises (a loop calling
 * libm's expf cannot be): @x is reduced to r + n ln 2 (|r| <= ln 2 / 2, the
 * constant split in two as Cephes' expf does), e^r is a degree-7
 * polynomial (Cephes' coefficients) and 2^n is built from its bits, in two
 * halves so that neither leaves the normal range. Within 1 ulp of e^x
 * where that is normal; 0 where it is subnormal
 * (below -87.33654), +inf past 88.722, NaN for NaN. The CPU's softmax loop
 * runs it. */
CBI_HD float
cbi_exp (float x)
{
  /* 1.5 x 2^23: adding it rounds to an integer n, which the sum's low
   * mantissa bits then hold */
  const float shifter = 12582912.0f;
  const float lo = -87.33654022f, hi = 88.7228391117f;
  /* a NaN passes both comparisons through */
  const float c = x < lo ? lo : x > hi ? hi : x;
  const float t = c * 1.44269504088896341f + shifter;
  const float n = t - shifter;
  const float r = (c - n * 0.693359375f) + n * 2.12194440e-4f;
  const int32_t k = (int32_t) (cbi_float_bits (t) - cbi_float_bits (shifter));
  const int32_t h = k / 2;
  float p = 1.9875691500e-4f;

  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  p = p * cbi_bits_float ((uint32_t) (h + 127) << 23)
      * cbi_bits_float ((uint32_t) (k - h + 127) << 23);
  return x > hi ? INFINITY : x < lo ? 0.0f : p;
}

/* ---- element-wise and binary ops ------------------------------------- */

/* op (@x) as oneDNN computes it (its reference definitions; plain ReLU as
 * its vector code, which gives 0 for NaN and -inf). Clip and HardSigmoid
 * give their minimum for NaN, Sigmoid gives 0. */
CBI_HD float
cbi_eltwise (CbiKEltwise op, float x, float alpha, float beta)
{
  float t;

  switch (op) {
    case CBI_K_RELU:
      if (x > 0.0f)
        return x;
      return alpha == 0.0f ? 0.0f : x * alpha;
    case CBI_K_SIGMOID:
      /* no exp overflow to infinity: a denominator of inf is avoided */
      t = -x;
      return t < 88.72283172607421875f ? 1.0f / (1.0f + expf (t)) : 0.0f;
    case CBI_K_TANH:
      return tanhf (x);
    case CBI_K_CLIP:
      t = x > alpha ? x : alpha;
      return t > beta ? beta : t;
    case CBI_K_ELU:
      return x > 0.0f ? x : alpha * expm1f (x);
    case CBI_K_HARD_SIGMOID:
      t = alpha * x + beta;
      t = t > 0.0f ? t : 0.0f;
      return t > 1.0f ? 1.0f : t;
    case CBI_K_HARD_SWISH:
      t = x + 3.0f;
      t = t > 0.0f ? t : 0.0f;
      t = t > 6.0f ? 6.0f : t;
      return x * t / 6.0f;
    case CBI_K_ERF:
      return erff (x);
    case CBI_K_GELU_ERF:
      return 0.5f * x * (1.0f + erff (x * 0.70710678118654752f));
    case CBI_K_GELU_TANH:
      return 0.5f * x * (1.0f + tanhf (0.79788456080286536f
              * (x + 0.044715f * x * x * x)));
    case CBI_K_SQRT:
      return sqrtf (x);
    case CBI_K_EXP:
      return expf (x);
    case CBI_K_LOG:
      return logf (x);
    case CBI_K_NEG:
      return -x;
    case CBI_K_ABS:
      return fabsf (x);
    case CBI_K_RECIPROCAL:
      return 1.0f / x;
    case CBI_K_POW:
      /* the exponents exporters write, exact as the CPU's square */
      if (alpha == 2.0f)
        return x * x;
      if (alpha == 1.0f)
        return x;
      return powf (x, alpha);
    case CBI_K_LINEAR:
      return alpha * x + beta;
    case CBI_K_SWISH:
      /* x / (1 + e^(-alpha x)) as oneDNN's swish, the exp kept finite as
       * Sigmoid's */
      t = -alpha * x;
      return t < 88.72283172607421875f ? x / (1.0f + expf (t)) : 0.0f * x;
    case CBI_K_IDENTITY:
    default:
      return x;
  }
}

CBI_HD float
cbi_binary (CbiKBinary op, float a, float b)
{
  switch (op) {
    case CBI_K_ADD:
      return a + b;
    case CBI_K_SUB:
      return a - b;
    case CBI_K_MUL:
      return a * b;
    case CBI_K_DIV:
      return a / b;
    case CBI_K_MIN:
      /* NaN in either gives NaN, as ONNX Min and Max */
      return a != a || b != b ? a + b : a < b ? a : b;
    case CBI_K_MAX:
      return a != a || b != b ? a + b : a > b ? a : b;
    case CBI_K_POWER:
      return powf (a, b);
    case CBI_K_PRELU:
    default:
      return a > 0.0f ? a : a * b;
  }
}

/* ---- reductions ------------------------------------------------------- */

/* The reduction of @count values of @x, @stride apart: their mean, sum or
 * maximum (NaN when one is NaN), summed in order; or the index of the
 * maximum (a NaN counts as the maximum, the first one as numpy's) as a
 * float, exact below 2^24. */
CBI_HD float
cbi_reduce (CbiKReduce op, const float *x, int64_t count, int64_t stride)
{
  const int arg = op == CBI_K_REDUCE_ARGMAX || op == CBI_K_REDUCE_ARGMAX_LAST;
  float acc = op == CBI_K_REDUCE_SUM || op == CBI_K_REDUCE_MEAN ? 0.0f :
      -INFINITY;
  int64_t k, index = 0;

  for (k = 0; k < count; k++) {
    float v = x[k * stride];
    if (!arg && op != CBI_K_REDUCE_MAX) {
      acc += v;
    } else if (acc != acc) {
      break;                    /* NaN: the result, whatever follows */
    } else if (v > acc || v != v || k == 0
        || (op == CBI_K_REDUCE_ARGMAX_LAST && v == acc)) {
      acc = v;
      index = k;
    }
  }
  if (arg)
    return (float) index;
  return op == CBI_K_REDUCE_MEAN ? acc / (float) count : acc;
}

/* Where: @a where the condition @c holds (is not 0), else @b. */
CBI_HD float
cbi_where (float c, float a, float b)
{
  return c != 0.0f ? a : b;
}

/* ---- index mappings --------------------------------------------------- */

/* The strides, in elements, at which a row-major @b_rank-D tensor of
 * @b_dims, aligned to the right of the @rank dims it broadcasts to, is
 * read for each of their indices: 0 along a broadcast dimension. */
CBI_HD void
cbi_broadcast_strides (int rank, int b_rank, const int64_t * b_dims,
    int64_t * strides)
{
  int64_t stride = 1;
  int d;

  for (d = rank - 1; d >= 0; d--) {
    int bd = d - (rank - b_rank);
    int64_t size = bd >= 0 ? b_dims[bd] : 1;
    strides[d] = size == 1 ? 0 : stride;
    stride *= size;
  }
}

/* The offset, at @strides, of element @i of a row-major tensor of @rank
 * dims @dims; @i below the product of the dims (the outermost dim is not
 * reduced modulo its size). Rank 0 is offset 0. */
CBI_HD int64_t
cbi_strided_offset (int64_t i, int rank, const int64_t * dims,
    const int64_t * strides)
{
  int64_t off = 0;
  int j;

  if (rank <= 0)
    return 0;
  for (j = rank - 1; j > 0; j--) {
    int64_t q = i / dims[j];
    off += (i - q * dims[j]) * strides[j];
    i = q;
  }
  return off + i * strides[0];
}

/* The same in 32 bits, for tensors whose element counts and offsets all
 * fit in an int (64-bit division is several times slower on a GPU). */
CBI_HD int
cbi_strided_offset32 (int i, int rank, const int *dims, const int *strides)
{
  int off = 0;
  int j;

  if (rank <= 0)
    return 0;
  for (j = rank - 1; j > 0; j--) {
    int q = i / dims[j];
    off += (i - q * dims[j]) * strides[j];
    i = q;
  }
  return off + i * strides[0];
}

/* Merges neighbouring dims of @dims (@rank of them) that @strides walks
 * as one: dims j and j + 1 merge when strides[j] = strides[j + 1] x
 * dims[j + 1] (both 0 for a broadcast). Dims of size 1 are dropped.
 * cbi_strided_offset () then gives the same offsets in fewer steps.
 * Returns the new rank (0 for a single element). */
CBI_HD int
cbi_coalesce_dims (int rank, int64_t * dims, int64_t * strides)
{
  int n = 0, j;

  for (j = 0; j < rank; j++) {
    if (dims[j] == 1)
      continue;
    if (n > 0 && strides[n - 1] == strides[j] * dims[j]) {
      dims[n - 1] *= dims[j];
      strides[n - 1] = strides[j];
    } else {
      dims[n] = dims[j];
      strides[n] = strides[j];
      n++;
    }
  }
  return n;
}

/* For a transposition of x (@rank dims @x_dims, row-major) by @perm (y's
 * dim j is x's dim perm[j]): y's dims, and per y dim the stride of x it
 * walks, so that element i of y is x[cbi_strided_offset (i, rank, y_dims,
 * x_strides)]. @perm must be a permutation of 0..rank-1. */
CBI_HD void
cbi_permute_strides (int rank, const int64_t * x_dims, const int64_t * perm,
    int64_t * y_dims, int64_t * x_strides)
{
  int64_t row_major[CBI_K_MAX_DIMS];
  int64_t s = 1;
  int j;

  for (j = rank - 1; j >= 0; j--) {
    row_major[j] = s;
    s *= x_dims[j];
  }
  for (j = 0; j < rank; j++) {
    y_dims[j] = x_dims[perm[j]];
    x_strides[j] = row_major[perm[j]];
  }
}

/* Pad: the source index for output index @i - pad (so -pad .. size + pad
 * - 1) along an axis of @size, or -1 where the constant goes. Reflect
 * mirrors once without repeating the border (pads below @size), edge
 * repeats the border. */
CBI_HD int64_t
cbi_pad_index (int64_t i, int64_t size, CbiKPadFill fill)
{
  if (i >= 0 && i < size)
    return i;
  if (fill == CBI_K_PAD_REFLECT)
    return i < 0 ? -i : 2 * (size - 1) - i;
  if (fill == CBI_K_PAD_EDGE)
    return i < 0 ? 0 : size - 1;
  return -1;                    /* constant */
}

/**
 * CbiKPool:
 * @kernel: window height and width
 * @stride: step between windows, rows and columns
 * @dilation: step between a window's taps
 * @pad: padding before the first row and column (the padding after only
 *   bounds the output's size)
 * @max: max pooling, else average
 * @count_pad: an average divides by the whole window, padding included
 *   (ONNX count_include_pad), else by its taps inside the input
 */
typedef struct
{
  int kernel[2];
  int stride[2];
  int dilation[2];
  int pad[2];
  int max;
  int count_pad;
} CbiKPool;

/* Pooling: output (@oy, @ox) of the @height x @width plane @x, the max or
 * the average of its window's taps inside the plane (0 for a window with
 * none, which pads below the window, as ONNX has them, never give). Any
 * pads and dilations, which cuDNN's pooling lacks. */
CBI_HD float
cbi_pool_at (const float *x, int64_t height, int64_t width, int64_t oy,
    int64_t ox, const CbiKPool * p)
{
  float acc = p->max ? -INFINITY : 0.0f;
  int taps = 0, ky, kx;

  for (ky = 0; ky < p->kernel[0]; ky++) {
    const int64_t iy = oy * p->stride[0] - p->pad[0]
        + (int64_t) ky * p->dilation[0];
    if (iy < 0 || iy >= height)
      continue;
    for (kx = 0; kx < p->kernel[1]; kx++) {
      const int64_t ix = ox * p->stride[1] - p->pad[1]
          + (int64_t) kx * p->dilation[1];
      float v;
      if (ix < 0 || ix >= width)
        continue;
      v = x[iy * width + ix];
      /* a NaN tap is dropped, as cuDNN's pooling does it
       * (CUDNN_NOT_PROPAGATE_NAN) */
      acc = p->max ? fmaxf (acc, v) : acc + v;
      taps++;
    }
  }
  if (taps == 0)
    return 0.0f;
  if (p->max)
    return acc;
  return acc / (float) (p->count_pad ? p->kernel[0] * p->kernel[1] : taps);
}

/* Resize, nearest: the source index of @dst along an axis of @in pixels
 * scaled by @scale: floor (dst / scale), within 0 .. in - 1. (For the
 * integer scales the engine takes, oneDNN's nearest gives the same.) */
CBI_HD int64_t
cbi_resize_nearest (int64_t dst, float scale, int64_t in)
{
  int64_t s = (int64_t) floorf ((float) dst / scale);

  if (s > in - 1)
    s = in - 1;
  return s < 0 ? 0 : s;
}

/**
 * CbiLinearTap:
 * @i0: the left (upper) source index
 * @i1: the right (lower) one, i0 or i0 + 1
 * @w0: the weight of @i0
 * @w1: the weight of @i1, 1 - @w0
 *
 * One axis of bilinear resizing.
 */
typedef struct
{
  int64_t i0, i1;
  float w0, w1;
} CbiLinearTap;

/* Resize, linear: the two source indices of @dst along an axis of @in
 * pixels scaled by @scale and their weights, with half-pixel centres:
 * s = (dst + 0.5) / scale - 0.5; outside 0 .. in - 1 both indices are the
 * border (oneDNN's linear_coeffs_t). */
CBI_HD CbiLinearTap
cbi_resize_linear (int64_t dst, float scale, int64_t in)
{
  float s = ((float) dst + 0.5f) / scale - 0.5f;
  CbiLinearTap t;
  int64_t c;

  t.i0 = s > 0.0f ? (int64_t) s : 0;
  if (s < 0.0f) {
    c = 0;
  } else {
    c = (int64_t) s;
    if ((float) c != s)
      c++;
  }
  t.i1 = c < in - 1 ? c : in - 1;
  t.w1 = fabsf (s - (float) t.i0);
  t.w0 = 1.0f - t.w1;
  return t;
}

/* Bilinear: v[row][col] of the four taps, weighted by @h (rows) and @w
 * (columns), summed in oneDNN's order. */
CBI_HD float
cbi_bilinear (float v00, float v01, float v10, float v11, CbiLinearTap h,
    CbiLinearTap w)
{
  float d = 0.0f;

  d += v00 * h.w0 * w.w0;
  d += v01 * h.w0 * w.w1;
  d += v10 * h.w1 * w.w0;
  d += v11 * h.w1 * w.w1;
  return d;
}

/* ---- normalisation ---------------------------------------------------- */

/* InstanceNormalization of a plane with @mean and (biased) @variance:
 * the factor of (x - mean), gamma / sqrt (variance + epsilon). */
CBI_HD float
cbi_norm_factor (float gamma, float variance, float epsilon)
{
  return gamma / sqrtf (variance + epsilon);
}

CBI_HD float
cbi_norm_value (float x, float mean, float factor, float beta)
{
  return factor * (x - mean) + beta;
}

/* ---- recurrent layers ------------------------------------------------- */

/**
 * CbiKCellOp:
 * @CBI_K_CELL_LSTM: gates i, o, f, c (ONNX's order): c' = f c + i c~,
 *   h' = o tanh (c')
 * @CBI_K_CELL_GRU: gates z, r, h, the reset applied after the recurrent
 *   product (ONNX's linear_before_reset 1, as PyTorch and Keras write):
 *   n = tanh (x_h + b_h + r (r_h + rb_h)), h' = (1 - z) n + z h
 * @CBI_K_CELL_GRU_RESET: the reset gate applied before it (linear_before_reset
 *   0), first half: writes r h into @h, which the recurrent product of
 *   the h gate then reads
 * @CBI_K_CELL_GRU_AFTER: its second half, once that product is in @r:
 *   n = tanh (x_h + b_h + r_h + rb_h), h' = (1 - z) n + z h
 * @CBI_K_CELL_RNN: one gate: h' = tanh (x + r + b)
 * @CBI_K_CELL_RANGE: no op (see above)
 *
 * What one time step of a recurrent layer computes per hidden unit, on
 * the gate sums its two matrix products left (cbi_recurrent_unit ()).
 */
typedef enum
{
  CBI_K_CELL_LSTM,
  CBI_K_CELL_GRU,
  CBI_K_CELL_GRU_RESET,
  CBI_K_CELL_GRU_AFTER,
  CBI_K_CELL_RNN,
  CBI_K_CELL_RANGE = -0x7fffffff - 1,
} CbiKCellOp;

/**
 * CbiKCell:
 * @op: the step's CbiKCellOp
 * @batch: rows (the sequences of the batch)
 * @hidden: hidden units per row
 * @x: this step's input product X W^T: @batch rows, @x_stride apart, of
 *   the gates' @hidden values each, in the op's gate order
 * @x_stride: elements from one row of @x to the next
 * @r: (nullable): the recurrent product h W_r^T, @batch rows of the
 *   gates, @r_stride apart; NULL where the previous h is zero (the first
 *   step without an initial state)
 * @r_stride: elements from one row of @r to the next
 * @bias: the gates' bias (the input's and the recurrent one summed,
 *   except for the GRU's h gate: its input bias only)
 * @r_bias: (nullable): GRU: the recurrent bias of the h gate, @hidden
 * @h_prev: (nullable): the previous h, @batch x @hidden; NULL: zero
 * @c_prev: (nullable): LSTM: the previous cell state; NULL: zero
 * @c: LSTM: the new cell state (may be @c_prev)
 * @h: the new h, @batch x @hidden (GRU_RESET: r h)
 * @limit: CBI_CELL_TANH_LIMIT (cbi_cell_tanh ())
 *
 * One time step of one direction of a recurrent layer, after its matrix
 * products: the CPU backend's loop and the CUDA kernel both run
 * cbi_recurrent_unit () on it for each unit.
 */
typedef struct
{
  CbiKCellOp op;
  int64_t batch, hidden;
  const float *x;
  int64_t x_stride;
  const float *r;
  int64_t r_stride;
  const float *bias;
  const float *r_bias;
  const float *h_prev;
  const float *c_prev;
  float *c;
  float *h;
  float limit;
} CbiKCell;

/* |x| past which the cells' tanh is +-1 (cbi_cell_tanh ()): what
 * CbiKCell.limit holds */
#define CBI_CELL_TANH_LIMIT 7.99881172180175781f

/* The cells' tanh, as plain arithmetic (so that a CPU loop over a row's
 * units vectorises, and the GPU computes the same): x clamped to
 * +-@limit (CBI_CELL_TANH_LIMIT), then a rational function of degree 13
 * over 6 (Eigen's fast tanh), within 4e-7 of tanh; NaN stays NaN. The
 * limit is a parameter, not the constant: a loop reads it from memory,
 * where GCC cannot split the loop on the clamp (a known constant on one
 * side), which keeps it from vectorising. */
CBI_HD float
cbi_cell_tanh (float x, float limit)
{
  float a = fabsf (x), x2, p, q;

  a = a > limit ? limit : a;
  x = copysignf (a, x);
  x2 = x * x;
  p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  p = p * x;
  q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return p / q;
}

/* The cells' gate activation, 1 / (1 + e^-x) = (1 + tanh (x / 2)) / 2. */
CBI_HD float
cbi_cell_sigmoid (float x, float limit)
{
  return 0.5f + 0.5f * cbi_cell_tanh (0.5f * x, limit);
}

/* Gate @g's sum for unit @j of row @b: input product, recurrent product
 * (when there is one) and bias. */
CBI_HD float
cbi_cell_gate (const CbiKCell * s, int64_t b, int g, int64_t j)
{
  const int64_t k = g * s->hidden + j;
  float v = s->x[b * s->x_stride + k] + s->bias[k];

  return s->r ? v + s->r[b * s->r_stride + k] : v;
}

/* The cells' math on their gate sums (cbi_cell_gate ()): LSTM's, with
 * i, o, f, c in ONNX's order, the previous cell state @c_prev and the new
 * one into *@c; returns h. */
CBI_HD float
cbi_lstm_cell (float i, float o, float f, float g, float c_prev, float *c,
    float limit)
{
  const float cn = cbi_cell_sigmoid (f, limit) * c_prev
      + cbi_cell_sigmoid (i, limit) * cbi_cell_tanh (g, limit);

  *c = cn;
  return cbi_cell_sigmoid (o, limit) * cbi_cell_tanh (cn, limit);
}

/* GRU's h from its z and r sums, @xh (x_h + b_h) and @rh (the recurrent
 * h product + rb_h): @reset_after, r multiplies @rh; else @rh is the
 * product of r h already (CBI_K_CELL_GRU_AFTER). */
CBI_HD float
cbi_gru_cell (float z, float r, float xh, float rh, float h_prev,
    int reset_after, float limit)
{
  const float zs = cbi_cell_sigmoid (z, limit);
  const float n = cbi_cell_tanh (xh + (reset_after ? cbi_cell_sigmoid (r,
              limit) * rh : rh), limit);

  return (1.0f - zs) * n + zs * h_prev;
}

/* GRU with the reset gate first: r h, from r's sum. */
CBI_HD float
cbi_gru_reset (float r, float h_prev, float limit)
{
  return cbi_cell_sigmoid (r, limit) * h_prev;
}

/* Unit @i (row i / hidden, unit i % hidden) of step @s: its gate sums
 * gathered, then the op's cell. */
CBI_HD void
cbi_recurrent_unit (const CbiKCell * s, int64_t i)
{
  const int64_t b = i / s->hidden, j = i % s->hidden, hd = s->hidden;
  const float h_prev = s->h_prev ? s->h_prev[i] : 0.0f;
  float rh;

  switch (s->op) {
    case CBI_K_CELL_LSTM:
      s->h[i] = cbi_lstm_cell (cbi_cell_gate (s, b, 0, j),
          cbi_cell_gate (s, b, 1, j), cbi_cell_gate (s, b, 2, j),
          cbi_cell_gate (s, b, 3, j), s->c_prev ? s->c_prev[i] : 0.0f,
          &s->c[i], s->limit);
      return;
    case CBI_K_CELL_GRU_RESET:
      s->h[i] = cbi_gru_reset (cbi_cell_gate (s, b, 1, j), h_prev, s->limit);
      return;
    case CBI_K_CELL_GRU:
    case CBI_K_CELL_GRU_AFTER:
      rh = (s->r ? s->r[b * s->r_stride + 2 * hd + j] : 0.0f)
          + (s->r_bias ? s->r_bias[j] : 0.0f);
      s->h[i] = cbi_gru_cell (cbi_cell_gate (s, b, 0, j),
          cbi_cell_gate (s, b, 1, j), s->x[b * s->x_stride + 2 * hd + j]
          + s->bias[2 * hd + j], rh, h_prev, s->op == CBI_K_CELL_GRU,
          s->limit);
      return;
    case CBI_K_CELL_RNN:
    default:
      s->h[i] = cbi_cell_tanh (cbi_cell_gate (s, b, 0, j), s->limit);
      return;
  }
}

#ifdef __cplusplus
}
#endif
