/* iolab-bench: the backend registry, generated from backends.def. */
#include "backend.h"

#include <string.h>

#define IOLAB_BACKEND(n) extern const iolab_backend_t iolab_backend_##n;
#include "backends.def"
#undef IOLAB_BACKEND

#define IOLAB_BACKEND(n) &iolab_backend_##n,
static const iolab_backend_t *const registry[] = {
#include "backends.def"
};
#undef IOLAB_BACKEND

const iolab_backend_t *const *iolab_backends_all(size_t *n)
{
    *n = sizeof registry / sizeof *registry;
    return registry;
}

const iolab_backend_t *iolab_backend_find(const char *name)
{
    size_t n;
    const iolab_backend_t *const *all = iolab_backends_all(&n);
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}
