/* cudabatchinfer: engine errors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbitypes.h"

GQuark
cbi_error_quark (void)
{
  return g_quark_from_static_string ("cbi-error-quark");
}
