/* The real symbols: one pointer per line of symbols.def, found with dlsym(RTLD_NEXT) so
 * that a library preloaded after this one (iolab's tracer, libfiu) sees our calls. */
#include <dlfcn.h>
#include <sys/stat.h>

#include "iolab_buffer.h"

#define X(ret, name, params) ret(*iolab_buffer_real_##name) params;
#include "symbols.def"
#undef X

/* Resolves every symbol.  Missing ones (e.g. __fxstat on a new libc) stay NULL and their
 * wrappers are never called by programs linked against that libc. */
void iolab_buffer_resolve(void)
{
#define X(ret, name, params) \
    if (!iolab_buffer_real_##name) \
        *(void **)&iolab_buffer_real_##name = dlsym(RTLD_NEXT, #name);
#include "symbols.def"
#undef X
}
