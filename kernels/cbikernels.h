/* cudabatchinfer: the CUDA kernels' launchers, for the CUDA backend
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One op per .cu file. Every launcher queues its kernel on @stream, never
 * synchronises, and returns the launch's status (cudaGetLastError () right
 * after the launch), so a bad configuration is an error the backend turns
 * into a message, never an abort. All pointers are device memory unless
 * the parameter says otherwise; the descriptors (@f, @dims, @b_strides,
 * @perm) are host memory, read by the launcher and passed by value to the
 * kernel. Tensors are float32, row-major (NCHW for images). A launcher with
 * nothing to do (a count of 0) returns cudaSuccess without launching; one
 * given arguments it cannot run (a rank above CBI_K_MAX_DIMS, a pixel
 * stride other than 3 or 4, a negative count) returns cudaErrorInvalidValue
 * without launching.
 */
#pragma once

#include <stdint.h>
#ifdef CBI_K_HOST
#include "cbikernels-host.h"
#else
#include <cuda_runtime_api.h>
#endif

/* CbiKEltwise, CbiKBinary, CbiKPadFill, CbiKPool and CBI_K_MAX_DIMS,
 * with the per-element math the kernels run */
#include "cbimath.h"

#ifdef __cplusplus
extern "C"
{
#endif

/**
 * CbiKFrames:
 * @width: frame width in pixels
 * @height: frame height in pixels
 * @pixel_stride: bytes per pixel, 3 or 4
 * @rgb_offset: byte offsets within a pixel of the model's channels 0, 1, 2
 * @extra_offset: offset of the fourth byte of a 4-byte pixel, else -1
 * @scale: per model channel: value = byte x scale + bias
 * @bias: per model channel
 * @out_scale: per model channel: output byte = value x out_scale +
 *   out_offset, rounded and clamped
 * @out_offset: per model channel
 *
 * Frames in device memory are packed: frame f starts at f x width x
 * height x pixel_stride, rows are width x pixel_stride bytes apart.
 */
typedef struct
{
  int width;
  int height;
  int pixel_stride;
  int rgb_offset[3];
  int extra_offset;
  float scale[3];
  float bias[3];
  float out_scale[3];
  float out_offset[3];
} CbiKFrames;

/* Packs @n_frames frames into @tensor (@n_slots x 3 x height x width)
 * and fills slots @n_frames.. with a copy of the last frame's values
 * (@repeat_last and @n_frames > 0) or zeros. One pass over the pixels. */
cudaError_t cbi_k_pack (const uint8_t * frames, float *tensor,
    const CbiKFrames * f, int n_frames, int n_slots, int repeat_last,
    cudaStream_t stream);

/**
 * CbiKYuv:
 * @to_rgb: the coefficients of cbi_yuv_to_rgb () (CbiYuvMatrix's)
 * @chroma_step: bytes from one Cb (or Cr) sample to the next in a row: 1
 *   for planes of their own, 2 for an interleaved plane
 * @cb_offset: where Cb starts, from the end of the luma: 0 for I420's
 *   planes and NV12, 1 for NV21
 * @cr_offset: where Cr starts: ((@width + 1) / 2) x ((@height + 1) / 2)
 *   for I420's planes, 1 for NV12, 0 for NV21
 */
typedef struct
{
  int32_t to_rgb[5];
  int chroma_step;
  int cb_offset;
  int cr_offset;
} CbiKYuv;

/* Bytes of one 4:2:0 frame of @width x @height in device memory: its
 * luma (rows @width apart), then its chroma: a plane of Cb then one of Cr
 * (rows (@width + 1) / 2 apart, (@height + 1) / 2 rows), or one plane of
 * both interleaved (rows twice as long). */
static inline int64_t
cbi_k_yuv_frame_bytes (int width, int height)
{
  return (int64_t) width * height
      + 2 * (int64_t) ((width + 1) / 2) * ((height + 1) / 2);
}

/* Packs @n_frames 4:2:0 frames of @f's size, laid out as
 * cbi_k_yuv_frame_bytes () says (the chroma as @yuv says), frame after
 * frame, into @tensor as cbi_k_pack () does: each pixel converted to
 * R'G'B' bytes by @yuv (the chroma of its 2x2 block), @f->rgb_offset
 * indexing red, green, blue. */
cudaError_t cbi_k_pack_yuv (const uint8_t * frames, float *tensor,
    const CbiKFrames * f, const CbiKYuv * yuv, int n_frames, int n_slots,
    int repeat_last, cudaStream_t stream);

/* Unpacks the first @n_frames slots of @tensor (@channels x @out_height x
 * @out_width per slot; @channels 1, 3 or 4) into packed frames of
 * @out_width x @out_height with @f's pixel layout: byte = value x
 * out_scale + out_offset, rounded, clamped to 0..255; one channel goes to
 * the three colour bytes through channel 0's mapping. The fourth byte of a
 * 4-byte pixel is the fourth channel (scaled as channel 0, without
 * offset), else the input
 * frame's byte from @in_frames when the size is the input's (@f->width x
 * @f->height), else 255. */
cudaError_t cbi_k_unpack (const float *tensor, const uint8_t * in_frames,
    uint8_t * out_frames, const CbiKFrames * f, int channels, int out_width,
    int out_height, int n_frames, cudaStream_t stream);

/* y[i] = op (x[i]) for @count elements; @x may be @y. */
cudaError_t cbi_k_eltwise (const float *x, float *y, int64_t count,
    CbiKEltwise op, float alpha, float beta, cudaStream_t stream);

/* y = a op b over @rank dims @dims (a's and y's shape, row-major); b is
 * read at b_strides (in elements, 0 along a broadcast dimension). Then, if
 * @post is not CBI_K_IDENTITY, y = post (y) with @alpha and @beta. */
cudaError_t cbi_k_binary (const float *a, const float *b, float *y,
    int rank, const int64_t * dims, const int64_t * b_strides, CbiKBinary op,
    CbiKEltwise post, float alpha, float beta, cudaStream_t stream);

/* y[j...] = x[...] with y's dim j being x's dim perm[j]: a transposition
 * of x (@rank dims @dims), written row-major. DepthToSpace is one of a 6-D
 * view. */
cudaError_t cbi_k_permute (const float *x, float *y, int rank,
    const int64_t * dims, const int64_t * perm, cudaStream_t stream);

/* Gather on an activation: at most this many indices (CBI_MAX_GATHER) */
#define CBI_K_MAX_GATHER 64

/* y, row-major of @rank dims @dims, from x: element i of y reads x at
 * @offset plus each of its indices times @strides (0 repeats a
 * dimension), the index along @axis (-1: none) mapped through the
 * @n_index values of @index first. Slice, Gather and Expand. */
cudaError_t cbi_k_copy (const float *x, float *y, int rank,
    const int64_t * dims, const int64_t * strides, int64_t offset, int axis,
    int n_index, const int64_t * index, cudaStream_t stream);

/* cbi_k_copy () with any number of indices along @axis (>= 0): the
 * @n_index of @device_index, in device memory. */
cudaError_t cbi_k_copy_long (const float *x, float *y, int rank,
    const int64_t * dims, const int64_t * strides, int64_t offset, int axis,
    int n_index, const int64_t * device_index, cudaStream_t stream);

/* Copies one Concat input into its place: x is @outer x @x_inner, y is
 * @outer x @y_inner, x goes to columns @offset .. @offset + @x_inner of
 * every row. (inner = the concatenated axis and everything after it.) */
cudaError_t cbi_k_concat (const float *x, float *y, int64_t outer,
    int64_t x_inner, int64_t y_inner, int64_t offset, cudaStream_t stream);

/* Pads @planes planes of @height x @width by @top, @left, @bottom,
 * @right, as CbiPadFill (reflect: mirrored, the border not repeated). */
cudaError_t cbi_k_pad (const float *x, float *y, int64_t planes, int height,
    int width, int top, int left, int bottom, int right, CbiKPadFill fill,
    float value, cudaStream_t stream);

/* MaxPool or AveragePool (@p) of @planes planes of @height x @width into
 * @out_h x @out_w: any pads and dilations (cbi_pool_at ()). */
cudaError_t cbi_k_pool (const float *x, float *y, int64_t planes, int height,
    int width, int out_h, int out_w, const CbiKPool * p, cudaStream_t stream);
/* Resize of @planes planes @in_h x @in_w to @out_h x @out_w: nearest
 * (src = floor (dst / scale)) or, @linear, bilinear with half-pixel
 * centres, scale = out / in per axis (as ONNX Resize with those scales,
 * asymmetric nearest with floor rounding as Upsample). */
cudaError_t cbi_k_resize (const float *x, float *y, int64_t planes,
    int in_h, int in_w, int out_h, int out_w, float scale_h, float scale_w,
    int linear, cudaStream_t stream);

/* Softmax over the middle axis of x seen as @outer x @axis x @inner. */
cudaError_t cbi_k_softmax (const float *x, float *y, int64_t outer,
    int64_t axis, int64_t inner, cudaStream_t stream);

/* InstanceNormalization of @n x @c planes of @hw values: every plane
 * normalised by its own mean and variance (+ @epsilon), then x gamma[c] +
 * beta[c]. */
cudaError_t cbi_k_instance_norm (const float *x, float *y, int64_t n,
    int64_t c, int64_t hw, const float *gamma, const float *beta,
    float epsilon, cudaStream_t stream);

/* Adds bias[c] to every value of channel c of @n x @c x @hw (@bias NULL:
 * nothing), then applies @post (with @alpha, @beta): what a convolution's
 * epilogue does when cuDNN has not fused it. */
cudaError_t cbi_k_bias_act (float *y, const float *bias, int64_t n,
    int64_t c, int64_t hw, CbiKEltwise post, float alpha, float beta,
    cudaStream_t stream);

/* y (@n x @hw x @c, channels last, 16-bit @type) = x (@n x @c x @hw,
 * float32) rounded to nearest even: a convolution's input or filter for
 * cuDNN in half precision. */
cudaError_t cbi_k_to_half (const float *x, uint16_t * y, int64_t n,
    int64_t c, int64_t hw, CbiKHalf type, cudaStream_t stream);

/* y (@n x @c x @hw, float32) = post (x + bias[c]) for x (@n x @hw x @c,
 * channels last, 16-bit @type), exact before the bias; @bias nullable;
 * @post, @alpha, @beta as cbi_k_bias_act (). */
cudaError_t cbi_k_from_half (const uint16_t * x, float *y,
    const float *bias, int64_t n, int64_t c, int64_t hw, CbiKHalf type,
    CbiKEltwise post, float alpha, float beta, cudaStream_t stream);

/* y[o, i] = the reduction (@op, cbi_reduce ()) of x[o, 0 .. @r - 1, i],
 * x seen as @outer x @r x @inner and y as @outer x @inner. */
cudaError_t cbi_k_reduce (const float *x, float *y, int64_t outer, int64_t r,
    int64_t inner, CbiKReduce op, cudaStream_t stream);

/* LayerNormalization of @rows rows of @inner values: every row normalised
 * by its own mean and variance (+ @epsilon), then x gamma[i] + beta[i]
 * (@beta NULL: no shift). */
cudaError_t cbi_k_layer_norm (const float *x, float *y, int64_t rows,
    int64_t inner, const float *gamma, const float *beta, float epsilon,
    cudaStream_t stream);

/* y = c ? a : b (cbi_where ()) over @rank dims @dims (a's and y's shape,
 * row-major); b and c are read at @b_strides and @c_strides (in elements,
 * 0 along a broadcast dimension). */
cudaError_t cbi_k_where (const float *c, const float *a, const float *b,
    float *y, int rank, const int64_t * dims, const int64_t * b_strides,
    const int64_t * c_strides, cudaStream_t stream);

/* One time step of a recurrent layer, after its matrix products:
 * cbi_recurrent_unit () for each of @cell's batch x hidden units (@cell
 * copied: its pointers are device memory). */
cudaError_t cbi_k_recurrent_cell (const CbiKCell * cell, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
