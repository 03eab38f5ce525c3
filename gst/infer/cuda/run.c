/* cudabatchinfer: the CUDA backend's batches
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Frames are copied once into pinned staging (rows packed; scaled there
 * when they have another size than the model's), go to the device in one
 * copy, are packed to NCHW there; the plan's steps run on
 * the slot's stream (recorded as a CUDA graph after the first run);
 * results come back the same way. CUDA binds a device to a thread, so
 * every entry point selects the backend's device first: warm-up runs on
 * the state-change thread, batches on the streaming one.
 */
#include "cbicuda.h"

#include <string.h>

/* Queues every step; a failure names the step's node. */
static gboolean
cbi_cuda_run_steps (CbiCuda * cuda, CbiCudaPlan * plan, cudaStream_t stream,
    GError ** error)
{
  guint i;

  for (i = 0; i < plan->steps->len; i++) {
    const CbiCudaStep *s = &g_array_index (plan->steps, CbiCudaStep, i);
    /* the launchers report cudaGetLastError (): a non-sticky error a
     * cuDNN or cuBLAS call left behind (and reported itself) must not be
     * blamed on the next kernel */
    cudaGetLastError ();
    if (!s->run (cuda, plan, s->params, stream, error)) {
      g_prefix_error (error, "node %s: ", s->node);
      return FALSE;
    }
  }
  return TRUE;
}

/* Records the steps as a CUDA graph: the layers of a batch then cost one
 * launch. Done on the second run, once cuDNN and cuBLAS have made what
 * they make lazily on the first. Whatever fails here leaves the plan
 * running its steps one by one, with a warning, not an error. */
static void
cbi_cuda_record (CbiCuda * cuda, CbiCudaPlan * plan, cudaStream_t stream)
{
  cudaGraph_t graph = NULL;
  GError *error = NULL;
  cudaError_t status;

  /* a graph is not tied to the stream it was recorded on: every slot's
   * stream replays it */
  status = cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal);
  if (status == cudaSuccess) {
    gboolean ok = cbi_cuda_run_steps (cuda, plan, stream, &error);
    status = cudaStreamEndCapture (stream, &graph);
    if (!ok)
      status = cudaErrorStreamCaptureInvalidated;
  }
  if (status == cudaSuccess)
    status = cudaGraphInstantiate (&plan->graph, graph, 0);
  if (graph)
    cudaGraphDestroy (graph);
  if (status != cudaSuccess) {
    GST_WARNING ("could not record the batch as a CUDA graph (%s%s%s): "
        "running its steps one by one", cudaGetErrorString (status),
        error ? ", " : "", error ? error->message : "");
    cudaGetLastError ();
    plan->graph = NULL;
    plan->graph_failed = TRUE;
  }
  g_clear_error (&error);
}

gboolean
cbi_cuda_compute (CbiBackend * backend, gpointer p, guint slot, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  cudaStream_t stream = cuda->slot_streams[slot];

  if (!cbi_cuda_select (cuda, error)
      || !cbi_cuda_use_stream (cuda, stream, error))
    return FALSE;
  /* the handle is shared by the plans: each brings its workspace (its
   * products name their compute type in each call) */
  if (plan->uses_cublas && !CUBLAS_CHECK (cublasSetWorkspace (cuda->cublas,
              plan->cublas_workspace, CBI_CUDA_CUBLAS_WORKSPACE),
          "cublasSetWorkspace"))
    return FALSE;
  if (backend->replay && plan->graph == NULL && !plan->graph_failed
      && plan->runs > 0)
    cbi_cuda_record (cuda, plan, stream);
  plan->runs++;
  if (plan->graph)
    return CUDA_CHECK (cudaGraphLaunch (plan->graph, stream),
        "cudaGraphLaunch");
  return cbi_cuda_run_steps (cuda, plan, stream, error);
}

static void
cbi_cuda_frames_layout (const CbiFrameBatch * batch, CbiKFrames * f)
{
  guint c;

  f->width = batch->width;
  f->height = batch->height;
  f->pixel_stride = batch->pixel_stride;
  f->extra_offset = batch->extra_offset;
  for (c = 0; c < 3; c++) {
    f->rgb_offset[c] = batch->rgb_offset[c];
    f->scale[c] = batch->scale[c];
    f->bias[c] = batch->bias[c];
    f->out_scale[c] = batch->out_scale[c];
    f->out_offset[c] = batch->out_offset[c];
  }
}

/* Takes slot @k for a new batch. A batch that failed may still have work
 * queued on its stream that reads its staging: that is waited for. */
static CbiCudaSlot *
cbi_cuda_begin_slot (CbiCuda * cuda, CbiCudaPlan * plan, guint k,
    GError ** error)
{
  CbiCudaSlot *slot = &plan->slots[k];

  if (k >= plan->n_slots) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_BUSY, "slot %u of a plan for "
        "%u batches in flight", k, plan->n_slots);
    return NULL;
  }
  if (!cbi_cuda_select (cuda, error) || (slot->queued
          && !CUDA_CHECK (cudaStreamSynchronize (cuda->slot_streams[k]),
              "earlier batch")))
    return NULL;
  slot->queued = TRUE;
  slot->unpacked = FALSE;
  return slot;
}

/* Whether every 4:2:0 frame of @batch has the first one's colorimetry. */
static gboolean
cbi_cuda_one_matrix (const CbiFrameBatch * batch)
{
  guint i;

  for (i = 1; i < batch->n_frames; i++)
    if (memcmp (&batch->yuv[i], &batch->yuv[0], sizeof (CbiYuvMatrix)) != 0)
      return FALSE;
  return TRUE;
}

/* Where the chroma of 4:2:0 frame @i of @batch starts (Cb's plane, or
 * the interleaved plane), and the kernel's view of it. */
static const guint8 *
cbi_cuda_chroma_layout (const CbiFrameBatch * batch, guint i, CbiKYuv * k)
{
  const guint cw = (batch->width + 1) / 2, ch = (batch->height + 1) / 2;
  const guint8 *cb = batch->in_cb[i], *cr = batch->in_cr[i];

  memcpy (k->to_rgb, batch->yuv[i].to_rgb, sizeof (k->to_rgb));
  k->chroma_step = batch->chroma_step == 2 ? 2 : 1;
  if (k->chroma_step == 1) {
    k->cb_offset = 0;
    k->cr_offset = (gint) (cw * ch);
    return cb;
  }
  /* NV12 (Cb first) or NV21: the plane as it is */
  k->cb_offset = cb > cr ? 1 : 0;
  k->cr_offset = cb > cr ? 0 : 1;
  return MIN (cb, cr);
}

/* Copies 4:2:0 frame @i of @batch to @to as cbi_k_yuv_frame_bytes ()
 * lays it out: luma rows, then the chroma's, packed; from the host into
 * staging, or on the device (@batch->in_device) on @stream. */
static gboolean
cbi_cuda_copy_yuv (const CbiFrameBatch * batch, guint i, guint8 * to,
    cudaStream_t stream, GError ** error)
{
  const guint w = batch->width, h = batch->height;
  const guint cw = (w + 1) / 2, ch = (h + 1) / 2;
  const gsize stride = batch->in_chroma_stride[i];
  guint8 *chroma = to + (gsize) w * h;
  CbiKYuv k;
  const guint8 *from = cbi_cuda_chroma_layout (batch, i, &k);
  /* a row of the interleaved plane, or of one of two planes */
  const gsize row = (gsize) cw * k.chroma_step;
  guint y;

  if (batch->in_device)
    return CUDA_CHECK (cudaMemcpy2DAsync (to, w, batch->in[i],
            batch->in_stride[i], w, h, cudaMemcpyDeviceToDevice, stream),
        "luma copy on the device")
        && CUDA_CHECK (cudaMemcpy2DAsync (chroma, row, from, stride, row, ch,
            cudaMemcpyDeviceToDevice, stream), "chroma copy on the device")
        && (k.chroma_step == 2 || CUDA_CHECK (cudaMemcpy2DAsync (chroma +
                (gsize) cw * ch, cw, batch->in_cr[i], stride, cw, ch,
                cudaMemcpyDeviceToDevice, stream),
            "chroma copy on the device"));
  for (y = 0; y < h; y++)
    memcpy (to + (gsize) y * w, batch->in[i] + (gsize) y *
        batch->in_stride[i], w);
  for (y = 0; y < ch; y++) {
    memcpy (chroma + y * row, from + y * stride, row);
    if (k.chroma_step == 1)
      memcpy (chroma + (gsize) cw * ch + y * row, batch->in_cr[i] + y *
          stride, row);
  }
  return TRUE;
}

/* Frames are copied row by row into pinned staging (the one copy on the
 * way in) and sent in one copy, which overlaps the batch before computing;
 * they are packed into the input once that batch's layers are done.
 * 4:2:0 frames travel as they are and are converted in the pack kernel;
 * those scaled, or of several colorimetries, become R'G'B' in the copy.
 * Frames already on the device are copied there into the batch's. */
gboolean
cbi_cuda_upload (CbiBackend * backend, gpointer p, guint k,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  const gboolean scales = cbi_frame_batch_scales (batch);
  /* the kernel takes one matrix: frames of several colorimetries become
   * R'G'B' in the copy */
  const gboolean yuv = batch->layout == CBI_PIXELS_YUV420 && !scales
      && cbi_cuda_one_matrix (batch);
  const gsize row = (gsize) batch->width * batch->pixel_stride;
  const gsize frame = yuv ? (gsize) cbi_k_yuv_frame_bytes (batch->width,
      batch->height) : row * batch->height;
  cudaStream_t stream = cuda->slot_streams[k];
  CbiCudaSlot *slot;
  CbiKFrames f;
  CbiKYuv kyuv;
  guint i, y;

  if ((slot = cbi_cuda_begin_slot (cuda, plan, k, error)) == NULL)
    return FALSE;
  if (batch->in_device && (scales || (batch->layout == CBI_PIXELS_YUV420
              && !yuv))) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "frames in the GPU's "
        "memory cannot be scaled, nor be of several colorimetries in a "
        "batch");
    return FALSE;
  }
  /* from the device: copied there, a frame at a time, into the batch's
   * frames; nothing crosses to the host */
  if (batch->in_device) {
    for (i = 0; i < batch->n_frames; i++)
      if (!(yuv ? cbi_cuda_copy_yuv (batch, i, slot->frames_in + i * frame,
                  stream, error) : CUDA_CHECK (cudaMemcpy2DAsync
                  (slot->frames_in + i * frame, row, batch->in[i],
                      batch->in_stride[i], row, batch->height,
                      cudaMemcpyDeviceToDevice, stream),
                  "frame copy on the device")))
        return FALSE;
  }
  /* a frame of another size is scaled in this copy: staging, the upload
   * and the pack kernel see the model's size whatever the streams' */
  for (i = 0; !batch->in_device && i < batch->n_frames; i++) {
    if (yuv) {
      cbi_cuda_copy_yuv (batch, i, slot->staging_in + i * frame, stream, NULL);
      continue;
    }
    for (y = 0; y < batch->height; y++)
      if (batch->layout == CBI_PIXELS_YUV420 && !scales)
        cbi_frame_batch_yuv_row (batch, i, y, 0, batch->width,
            slot->staging_in + i * frame + y * row);
      else if (scales)
        cbi_frame_batch_scale_row_in (batch, i, y, 0, batch->width,
            slot->staging_in + i * frame + y * row);
      else
        memcpy (slot->staging_in + i * frame + y * row,
            batch->in[i] + (gsize) y * batch->in_stride[i], row);
  }
  cbi_cuda_frames_layout (batch, &f);
  if (yuv)
    cbi_cuda_chroma_layout (batch, 0, &kyuv);
  if ((!batch->in_device && !CUDA_CHECK (cudaMemcpyAsync (slot->frames_in,
                  slot->staging_in, frame * batch->n_frames,
                  cudaMemcpyHostToDevice, stream), "frame upload"))
      || !CUDA_CHECK (cudaStreamWaitEvent (stream, cuda->computed, 0),
          "waiting for the batch before"))
    return FALSE;
  if (yuv)
    return CUDA_CHECK (cbi_k_pack_yuv (slot->frames_in, plan->input, &f,
            &kyuv, batch->n_frames, batch->n_slots,
            batch->pad_mode == CBI_PAD_REPEAT_LAST, stream), "frame packing");
  return CUDA_CHECK (cbi_k_pack (slot->frames_in, plan->input, &f,
          batch->n_frames, batch->n_slots,
          batch->pad_mode == CBI_PAD_REPEAT_LAST, stream), "frame packing");
}

gboolean
cbi_cuda_upload_tensor (CbiBackend * backend, gpointer p, guint k,
    const gfloat * input, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  cudaStream_t stream = cuda->slot_streams[k];

  return cbi_cuda_begin_slot (cuda, plan, k, error) != NULL
      && CUDA_CHECK (cudaStreamWaitEvent (stream, cuda->computed, 0),
      "waiting for the batch before")
      && CUDA_CHECK (cudaMemcpyAsync (plan->input, input, plan->input_count *
          sizeof (gfloat), cudaMemcpyHostToDevice, stream), "tensor upload");
}

/* Output 0 of an image batch is unpacked on the device, and the other
 * outputs are copied to pinned memory; once that is queued, the next batch
 * may take the layers' tensors (the event), while this one's frames go
 * back to staging in one copy. */
gboolean
cbi_cuda_download (CbiBackend * backend, gpointer p, guint k,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  CbiCudaSlot *slot = &plan->slots[k];
  cudaStream_t stream = cuda->slot_streams[k];
  gboolean image = batch && batch->out;
  CbiKFrames f;
  guint i;

  if (image != plan->unpack_frames) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "a batch %s frames on "
        "a plan made %s them", image ? "unpacking" : "not unpacking",
        plan->unpack_frames ? "to unpack" : "not to unpack");
    return FALSE;
  }
  if (!cbi_cuda_select (cuda, error))
    return FALSE;
  if (image) {
    slot->out_row = (gsize) (batch->out_width ? batch->out_width :
        batch->width) * batch->pixel_stride;
    slot->out_height = batch->out_height ? batch->out_height : batch->height;
    slot->out_frames = batch->n_frames;
    slot->unpacked = TRUE;
    cbi_cuda_frames_layout (batch, &f);
    if (!CUDA_CHECK (cbi_k_unpack (plan->outputs[0], slot->frames_in,
                slot->frames_out, &f, batch->out_channels ?
                batch->out_channels : 3, slot->out_row /
                batch->pixel_stride, slot->out_height, batch->n_frames,
                stream), "frame unpacking"))
      return FALSE;
  }
  for (i = image ? 1 : 0; i < G_N_ELEMENTS (plan->outputs)
      && plan->outputs[i]; i++)
    if (!CUDA_CHECK (cudaMemcpyAsync (slot->host_outputs[i],
                plan->outputs[i], plan->output_bytes[i],
                cudaMemcpyDeviceToHost, stream), "output download"))
      return FALSE;
  if (!CUDA_CHECK (cudaEventRecord (cuda->computed, stream), "batch done"))
    return FALSE;
  return !image || CUDA_CHECK (cudaMemcpyAsync (slot->staging_out,
          slot->frames_out, slot->out_row * slot->out_height *
          slot->out_frames, cudaMemcpyDeviceToHost, stream), "frame download");
}

/* Waits for the slot, then copies rows to the output frames (the one copy
 * on the way out). */
gboolean
cbi_cuda_finish (CbiBackend * backend, gpointer p, guint k,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaSlot *slot = &((CbiCudaPlan *) p)->slots[k];
  guint i;

  if (!cbi_cuda_select (cuda, error)
      || !CUDA_CHECK (cudaStreamSynchronize (cuda->slot_streams[k]), "batch"))
    return FALSE;
  slot->queued = FALSE;
  /* a frame of another size gets its window scaled back in this copy,
   * and 4:2:0 frames their R'G'B' converted */
  for (i = 0; slot->unpacked && batch && batch->out && i < slot->out_frames;
      i++)
    cbi_frame_batch_write_out (batch, i, slot->staging_out + i *
        slot->out_height * slot->out_row, slot->out_row);
  return TRUE;
}

const gfloat *
cbi_cuda_output (CbiBackend * backend, gpointer p, guint k, guint index,
    GError ** error)
{
  CbiCudaSlot *slot = &((CbiCudaPlan *) p)->slots[k];

  if (index == 0 && slot->unpacked) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "output 0 of the batch "
        "went to its frames");
    return NULL;
  }
  return slot->host_outputs[index];
}
