/* cudabatchinfer: engine errors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

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
} CbiError;

G_END_DECLS
