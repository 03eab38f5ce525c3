/* cudabatchinfer: one time step of a recurrent layer (LSTM, GRU, RNN)
 * after its matrix products
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per hidden unit of each row: cbi_recurrent_unit () of
 * cbimath.h, the CPU backend's loop too. cuBLAS computes the products
 * the step reads, on the same stream, before it.
 */
#include "cbikernels-private.cuh"

__global__ void
cbi_k_recurrent_cell_kernel (CbiKCell cell, int64_t count)
{
  CBI_K_FOR (int64_t, i, count) {
    cbi_recurrent_unit (&cell, i);
  }
}

cudaError_t
cbi_k_recurrent_cell (const CbiKCell * cell, cudaStream_t stream)
{
  int64_t count;

  if (cell == NULL || cell->batch < 0 || cell->hidden < 1
      || cell->op < CBI_K_CELL_LSTM || cell->op > CBI_K_CELL_RNN
      || cell->x == NULL || cell->bias == NULL || cell->h == NULL
      || (cell->op == CBI_K_CELL_LSTM && cell->c == NULL))
    return cudaErrorInvalidValue;
  count = cell->batch * cell->hidden;
  if (count == 0)
    return cudaSuccess;

  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_recurrent_cell_kernel), cbi_k_blocks (count),
      CBI_K_THREADS, 0, stream, *cell, count);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
