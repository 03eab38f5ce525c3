/* cudabatchinfer: the CPU backend's leaf: its log category and oneDNN's
 * status checked
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbicpu.h"

#include <dnnl_debug.h>

GST_DEBUG_CATEGORY (cbi_cpu_debug);

gboolean
cbi_dnnl_check (dnnl_status_t status, const gchar * what, const gchar * file,
    gint line, GError ** error)
{
  if (status == dnnl_success)
    return TRUE;
  GST_ERROR ("%s:%d: %s failed: %s", file, line, what,
      dnnl_status2str (status));
  g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "oneDNN: %s failed: %s",
      what, dnnl_status2str (status));
  return FALSE;
}
