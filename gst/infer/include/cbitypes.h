/* cudabatchinfer: the types the engine's API shares with the engine's
 * inside: shapes, frame batches, precisions, pool figures and errors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One of the two public headers of the engine (gst/infer/include/), with
 * cbiengine.h, which includes it: what the element may see of the engine.
 * The engine's own headers include it for the same types; nothing here
 * needs more than GLib.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* DepthToSpace is a 6-D transposition; image ops take 4-D (NCHW) */
#define CBI_MAX_DIMS 6
#define CBI_MAX_OUTPUTS 8

/* Batches that may be on their way through an engine at once: submitted,
 * not yet collected. */
#define CBI_MAX_INFLIGHT 8

/* A model, as the importer or the default model makes it (graph/cbigraph.h) */
typedef struct _CbiGraph CbiGraph;

/**
 * CbiShape:
 * @n_dims: the rank
 * @dims: the dimensions, outermost first
 *
 * The shape of one tensor for one planned input shape.
 */
typedef struct
{
  gint n_dims;
  gint64 dims[CBI_MAX_DIMS];
} CbiShape;

/* The number of values a tensor of @shape holds. */
gint64 cbi_shape_count (const CbiShape * shape);

/**
 * CbiPadMode:
 * @CBI_PAD_REPEAT_LAST: fill empty slots with the last real frame
 * @CBI_PAD_ZERO: fill empty slots with zeros
 * @CBI_PAD_NONE: run the batch at its real size
 */
typedef enum
{
  CBI_PAD_REPEAT_LAST,
  CBI_PAD_ZERO,
  CBI_PAD_NONE,
} CbiPadMode;

/**
 * CbiScaling:
 * @CBI_SCALE_NONE: every frame has the batch's size
 * @CBI_SCALE_STRETCH: each frame is scaled to the batch's size, its aspect
 *   ratio not kept
 * @CBI_SCALE_LETTERBOX: each frame is scaled to fit the batch's size with
 *   its aspect ratio kept, centred, the rest black (symmetric padding)
 *
 * How frames of other sizes than the batch's become its slots. Scaling is
 * bilinear, on the bytes (CbiScaleWalk, cbi_scale_mix()), and rounded to
 * bytes before the input mapping, so that every backend packs the same
 * values.
 */
typedef enum
{
  CBI_SCALE_NONE,
  CBI_SCALE_STRETCH,
  CBI_SCALE_LETTERBOX,
} CbiScaling;

/**
 * CbiYuvMatrix:
 * @to_rgb: Y'CbCr to R'G'B' in 1/256: luma's gain, Cr's in red, Cb's in
 *   blue, Cb's and Cr's in green
 * @to_luma: R'G'B' bytes to luma in 1/256: the weights of red, green
 *   and blue (Kr, 1 - Kr - Kb, Kb) over the range's luma gain, then the
 *   offset (16 or 0)
 * @to_cb: the same to Cb (offset 128)
 * @to_cr: the same to Cr
 *
 * A colorimetry's conversions between 8-bit Y'CbCr and R'G'B' bytes, made
 * by cbi_yuv_matrix_init (). Inward they are GStreamer videoconvert's
 * 8-bit I420 to RGB path, bit for bit; outward its RGB to 4:4:4 step's
 * coefficients (in 1/256) and truncation, each chroma sample then the
 * rounded mean of the (up to) 2x2 pixels' samples it stands for.
 */
typedef struct
{
  gint32 to_rgb[5];
  gint32 to_luma[4];
  gint32 to_cb[4];
  gint32 to_cr[4];
} CbiYuvMatrix;

/**
 * CbiPixelLayout:
 * @CBI_PIXELS_PACKED: one plane of 3- or 4-byte pixels (@pixel_stride,
 *   @rgb_offset, @extra_offset)
 * @CBI_PIXELS_YUV420: 8-bit Y'CbCr 4:2:0 (I420, YV12, NV12, NV21): a
 *   plane of luma at @in, and one Cb and one Cr sample for each 2x2
 *   pixels at @in_cb and @in_cr, @chroma_step bytes apart in a row. The
 *   engine sees R'G'B' pixels of 3 bytes (each frame's converted by its
 *   @yuv; @pixel_stride
 *   3, @rgb_offset 0, 1, 2 or 2, 1, 0), and writes an image output back to
 *   4:2:0 at @out, @out_cb and @out_cr
 *
 * How a batch's frames lie in memory.
 */
typedef enum
{
  CBI_PIXELS_PACKED,
  CBI_PIXELS_YUV420,
} CbiPixelLayout;

/**
 * CbiFrameBatch:
 * @width: frame width in pixels
 * @height: frame height in pixels
 * @pixel_stride: bytes per pixel (3 or 4)
 * @rgb_offset: byte offsets, within a pixel, of the model's channels 0, 1
 *   and 2 (red, green, blue for an RGB model; blue first for BGR)
 * @extra_offset: byte offset of the fourth byte (alpha or padding), which
 *   goes from input to output untouched where the sizes match and nothing
 *   is scaled (else 255, or the model's fourth channel); -1 for 3-byte
 *   formats
 * @scale: per model channel: input value = byte x @scale + @bias
 * @bias: per model channel
 * @out_scale: per model channel of an image output: output byte = value x
 *   @out_scale + @out_offset, rounded and clamped to 0..255;
 *   cbi_frame_batch_map_output_back() sets the inverse of the input's
 * @out_offset: per model channel
 * @n_frames: real frames; 0 for a dry run
 * @n_slots: tensor batch size; slots past @n_frames are padding
 * @pad_mode: how padding slots are filled
 * @in: (array length=n_frames): input pixels, one row pointer per frame
 * @in_stride: (array length=n_frames): input row strides in bytes
 * @out: (array length=n_frames) (nullable): output pixels, in @in's pixel
 *   layout, @out_width x @out_height; %NULL when the results are read as
 *   tensors instead
 * @out_stride: (array length=n_frames): output row strides in bytes
 * @out_width: output frame width; 0: @width
 * @out_height: output frame height; 0: @height
 * @out_channels: channels of the model's image output: 3, or 1 (grey,
 *   written to the three colour bytes) or 4 (the fourth written to the
 *   alpha byte, scaled as channel 0 without its offset); 0: 3
 * @scaling: how frames of their own size become slots of @width x
 *   @height; with %CBI_SCALE_NONE the arrays below are ignored
 * @in_width: (array length=n_frames): each input frame's width
 * @in_height: (array length=n_frames): each input frame's height
 * @out_frame_width: (array length=n_frames): each output frame's width:
 *   the model's output over the frame's window, scaled to it
 * @out_frame_height: (array length=n_frames): each output frame's height
 * @layout: how the frames lie in memory; %CBI_PIXELS_PACKED (0) unless
 *   set
 * @yuv: (array length=n_frames): for %CBI_PIXELS_YUV420, each frame's
 *   colorimetry's conversions (streams of one format may differ)
 * @chroma_step: bytes from one chroma sample to the next in a row: 1 for
 *   planes of their own (I420, YV12), 2 for one interleaved plane (NV12,
 *   NV21)
 * @in_cb: (array length=n_frames): for %CBI_PIXELS_YUV420, each frame's
 *   first Cb sample
 * @in_cr: (array length=n_frames): the same for Cr
 * @in_chroma_stride: (array length=n_frames): chroma rows' strides
 * @out_cb: (array length=n_frames) (nullable): for %CBI_PIXELS_YUV420 and
 *   an image output, each output frame's first Cb sample
 * @out_cr: (array length=n_frames) (nullable): the same for Cr
 * @out_chroma_stride: (array length=n_frames): output chroma rows' strides
 * @in_device: @in (and @in_cb, @in_cr) are pointers in the memory of the
 *   engine's CUDA device, not the host's: the CUDA backend copies them
 *   into the batch on the device; the CPU backend, and scaling, refuse
 *   them
 *
 * Borrowed pointers only: the engine reads @in and writes @out during
 * cbi_engine_run() and keeps nothing.
 */
typedef struct
{
  guint width;
  guint height;
  guint pixel_stride;
  guint rgb_offset[3];
  gint extra_offset;
  gfloat scale[3];
  gfloat bias[3];
  gfloat out_scale[3];
  gfloat out_offset[3];
  guint n_frames;
  guint n_slots;
  CbiPadMode pad_mode;
  const guint8 *const *in;
  const gint *in_stride;
  guint8 *const *out;
  const gint *out_stride;
  guint out_width;
  guint out_height;
  guint out_channels;
  CbiScaling scaling;
  const guint *in_width;
  const guint *in_height;
  const guint *out_frame_width;
  const guint *out_frame_height;
  CbiPixelLayout layout;
  const CbiYuvMatrix *yuv;
  guint chroma_step;
  const guint8 *const *in_cb;
  const guint8 *const *in_cr;
  const gint *in_chroma_stride;
  guint8 *const *out_cb;
  guint8 *const *out_cr;
  const gint *out_chroma_stride;
  gboolean in_device;
} CbiFrameBatch;

/**
 * CbiPoolStats:
 *
 * Snapshot of a pool's counters. Byte counts are what the pool holds:
 * @allocated_bytes is handed out to users, @reserved_bytes is what the pool
 * got from its allocator (handed out plus cached). Fresh counters are
 * cumulative since the pool was made.
 */
typedef struct
{
  guint64 allocated_bytes;
  guint64 reserved_bytes;
  guint64 peak_allocated_bytes;
  guint64 peak_reserved_bytes;
  guint64 fresh_allocations;
  guint64 fresh_bytes;
  guint64 failed_allocations;
} CbiPoolStats;

/**
 * CbiPrecision:
 * @CBI_PRECISION_FP32: float32 values and float32 arithmetic
 * @CBI_PRECISION_TF32: float32 values; products of tf32 (a float32 cut to
 *   10 bits of mantissa) on NVIDIA tensor cores, sums in float32
 * @CBI_PRECISION_BF16: the convolutions' operands in bfloat16 (8 bits of
 *   mantissa, float32's range), sums in float32
 * @CBI_PRECISION_FP16: the same in float16 (11 bits of mantissa, largest
 *   value 65504)
 * @CBI_PRECISION_AUTO: the lowest of the backend's that passes the
 *   warm-up's accuracy check and runs clearly faster than float32 there,
 *   float32 where none does
 *
 * The arithmetic a plan runs in. Whatever it is, the engine takes and
 * gives float32 tensors and frames.
 */
typedef enum
{
  CBI_PRECISION_FP32,
  CBI_PRECISION_TF32,
  CBI_PRECISION_BF16,
  CBI_PRECISION_FP16,
  CBI_PRECISION_AUTO,
} CbiPrecision;

/* Returns: (transfer none): "fp32", "tf32", "bf16", "fp16" or "auto" */
const gchar *cbi_precision_name (CbiPrecision precision);

/**
 * CbiAccuracy:
 * @max_abs_error: the largest difference from the float32 run: in the
 *   output's own units for a tensor, in byte values (0 to 255) for an
 *   image output read as frames
 * @relative_error: @max_abs_error over the largest magnitude of the
 *   float32 run's values (over 255 for frames); 0 where both are 0
 * @psnr: image outputs: the peak signal-to-noise ratio of the frames
 *   against the float32 run's, in dB (peak 255; INFINITY where they are
 *   the same); tensors: 0
 * @top1_agreement: outputs that hold class scores (one row of at least
 *   two per frame): the fraction of frames whose best class is the float32
 *   run's; -1 for other outputs
 * @nonfinite: values NaN or infinite where the float32 run's are finite
 *   (an overflow)
 *
 * How far one output of a batch run at a lower precision is from the same
 * batch at float32.
 */
typedef struct
{
  gdouble max_abs_error;
  gdouble relative_error;
  gdouble psnr;
  gdouble top1_agreement;
  guint64 nonfinite;
} CbiAccuracy;

#define CBI_ERROR (cbi_error_quark ())
GQuark cbi_error_quark (void);

/**
 * CbiError:
 * @CBI_ERROR_MEMORY: the pool could not get memory (allocator failure or
 *   the memory limit)
 * @CBI_ERROR_BACKEND: a backend library call failed
 * @CBI_ERROR_NO_BACKEND: the requested backend is not built or has no device
 * @CBI_ERROR_MODEL: the model is not usable (bad file, unsupported op)
 * @CBI_ERROR_SHAPE: the input shape does not fit the model
 * @CBI_ERROR_BUSY: every batch slot is in flight, or a call that needs
 *   none in flight was made with some (a caller's mistake)
 * @CBI_ERROR_PRECISION: the backend cannot run the precision asked for,
 *   or its results are too far from float32's
 * @CBI_ERROR_REMOTE: the inference server cannot be reached, did not
 *   answer in time, answered with an error, or sent a reply the engine
 *   cannot read (the remote backend)
 *
 * Error codes of the engine; the element maps each to a GStreamer error
 * domain.
 */
typedef enum
{
  CBI_ERROR_MEMORY,
  CBI_ERROR_BACKEND,
  CBI_ERROR_NO_BACKEND,
  CBI_ERROR_MODEL,
  CBI_ERROR_SHAPE,
  CBI_ERROR_BUSY,
  CBI_ERROR_PRECISION,
  CBI_ERROR_REMOTE,
} CbiError;

G_END_DECLS
