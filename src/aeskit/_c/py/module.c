/*
 * module.c: the aeskit._aeskit module: CPU detection and the default
 * backend (once per module, at import), backend lookup by name, the
 * exceptions. Multi-phase initialisation with module state, as CPython's
 * own extension modules do: nothing here is a process global but the
 * CPU's features (cpu.c).
 */
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "dispatch.h"
#include "glue.h"

static PyObject *known_names(void)
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list != NULL && aeskit_impls[i] != NULL; i++) {
        if (aeskit_impl_named_before(i, 0))
            continue;
        PyObject *s = PyUnicode_FromString(aeskit_impls[i]->name);
        if (s == NULL || PyList_Append(list, s) < 0) {
            Py_XDECREF(s);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(s);
    }
    return list;
}

/* Names of the features impl needs that this CPU lacks, space separated. */
static void missing_features(const struct aeskit_impl *impl, char *out, size_t cap)
{
    uint32_t missing = impl->cpu_needs & ~aeskit_cpu_features();
    out[0] = '\0';
    for (uint32_t bit = 1; bit != 0; bit <<= 1) {
        const char *name = aeskit_cpu_feature_name(bit);
        if ((missing & bit) && name != NULL) {
            if (out[0] != '\0')
                strncat(out, " ", cap - strlen(out) - 1);
            strncat(out, name, cap - strlen(out) - 1);
        }
    }
}

const struct aeskit_impl *aeskit_resolve_backend(aeskit_state *st, aeskit_at at,
                                                 const char *name)
{
    if (strcmp(name, "auto") == 0)
        return st->default_impl;
    const struct aeskit_impl *impl = aeskit_impl_by_name(name);
    if (impl == NULL) {
        PyObject *names = known_names();
        if (names != NULL)
            aeskit_error(PyExc_ValueError, at, "backend must be 'auto' or one of %R, got '%s'",
                         names, name);
        Py_XDECREF(names);
        return NULL;
    }
    if (!aeskit_impl_available(impl)) {
        char missing[256];
        missing_features(impl, missing, sizeof missing);
        aeskit_error(PyExc_ValueError, at, "backend '%s' is not available on this CPU "
                     "(missing: %s): use 'auto' or one of aeskit.backends().available", name,
                     missing);
        return NULL;
    }
    return impl;
}

PyTypeObject *aeskit_add_type(PyObject *module, aeskit_state *st, PyType_Spec *spec,
                              const void *desc)
{
    if (st->ntypes == AESKIT_MAX_TYPES) {
        PyErr_SetString(PyExc_SystemError, "aeskit: more types than AESKIT_MAX_TYPES");
        return NULL;
    }
    PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(module, spec, NULL);
    if (t == NULL)
        return NULL;
    st->types[st->ntypes].type = t;
    st->types[st->ntypes++].desc = desc;
    const char *dot = strrchr(spec->name, '.');
    if (PyModule_AddObjectRef(module, dot != NULL ? dot + 1 : spec->name, (PyObject *)t) < 0)
        return NULL;
    return t;
}

const void *aeskit_desc_of(aeskit_state *st, PyTypeObject *tp)
{
    for (size_t i = 0; i < st->ntypes; i++)
        if (st->types[i].type == tp)
            return st->types[i].desc;
    return NULL;
}

static PyObject *mod_backends(PyObject *m, PyObject *unused)
{
    (void)unused;
    const aeskit_state *st = PyModule_GetState(m);
    PyObject *all = known_names(), *avail = PyList_New(0);
    if (all == NULL || avail == NULL)
        goto fail;
    for (size_t i = 0; aeskit_impls[i] != NULL; i++) {
        if (!aeskit_impl_available(aeskit_impls[i]) || aeskit_impl_named_before(i, 1))
            continue;
        PyObject *s = PyUnicode_FromString(aeskit_impls[i]->name);
        if (s == NULL || PyList_Append(avail, s) < 0) {
            Py_XDECREF(s);
            goto fail;
        }
        Py_DECREF(s);
    }
    PyObject *r = Py_BuildValue("(NNs)", PyList_AsTuple(all), PyList_AsTuple(avail),
                                st->default_impl->name);
    Py_DECREF(all);
    Py_DECREF(avail);
    return r;
fail:
    Py_XDECREF(all);
    Py_XDECREF(avail);
    return NULL;
}

static PyObject *mod_cpu_features(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    PyObject *d = PyDict_New();
    uint32_t have = aeskit_cpu_features();
    for (uint32_t bit = 1; d != NULL && bit != 0; bit <<= 1) {
        const char *name = aeskit_cpu_feature_name(bit);
        if (name != NULL && PyDict_SetItemString(d, name, (have & bit) ? Py_True : Py_False) < 0)
            Py_CLEAR(d);
    }
    return d;
}

/* buffers_meet(a, b): whether two buffers share a byte, by address (an empty
 * buffer meets nothing). For the pyca compatibility layer, which refuses an
 * output buffer over its input as pyca 51 does and cannot see addresses from
 * Python. Any buffer objects; no copy. */
static PyObject *mod_buffers_meet(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "buffers_meet() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_buffer a, b;
    if (aeskit_get_buffer(args[0], &a, 0, "a") < 0)
        return NULL;
    if (aeskit_get_buffer(args[1], &b, 0, "b") < 0) {
        aeskit_release(&a);
        return NULL;
    }
    const int meet = aeskit_meets(a.buf, (size_t)a.len, b.buf, (size_t)b.len);
    aeskit_release(&a);
    aeskit_release(&b);
    return PyBool_FromLong(meet);
}

static PyMethodDef module_methods[] = {
    {"backends", mod_backends, METH_NOARGS,
     PyDoc_STR("backends() -> (all, available, default)")},
    {"cpu_features", mod_cpu_features, METH_NOARGS,
     PyDoc_STR("cpu_features() -> dict of feature name to bool (instructions and OS state)")},
    {"buffers_meet", (PyCFunction)(void (*)(void))mod_buffers_meet, METH_FASTCALL,
     PyDoc_STR("buffers_meet(a, b) -> bool: whether the two buffers share a byte")},
    {NULL, NULL, 0, NULL},
};

/* AESKIT_BACKEND=NAME forces the default; a bad name fails the import. */
static int choose_default(aeskit_state *st)
{
    st->default_impl = aeskit_impl_best();
    const char *env = getenv("AESKIT_BACKEND");
    if (env == NULL || env[0] == '\0')
        return 0;
    const struct aeskit_impl *impl = aeskit_resolve_backend(st, AESKIT_NOWHERE, env);
    if (impl == NULL) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        aeskit_error(PyExc_ImportError, AESKIT_NOWHERE, "AESKIT_BACKEND=%s: %S", env, value);
        Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(tb);
        return -1;
    }
    st->default_impl = impl;
    return 0;
}

static int module_exec(PyObject *m)
{
    aeskit_state *st = PyModule_GetState(m);
    aeskit_cpu_detect();
    if (choose_default(st) < 0)
        return -1;
    st->AlreadyFinalized = PyErr_NewExceptionWithDoc(
        "aeskit.AlreadyFinalized",
        "Raised when a streaming context is used after finalize().", NULL, NULL);
    /* one class for every length limit of the library: OverflowError for
     * what it is, ValueError for code written against pyca, which raises
     * that at its limits */
    PyObject *limit_bases = PyTuple_Pack(2, PyExc_OverflowError, PyExc_ValueError);
    st->LimitExceeded = limit_bases == NULL ? NULL : PyErr_NewExceptionWithDoc(
        "aeskit.LimitExceeded",
        "Raised when data, associated data or a counter passes a mode's limit.",
        limit_bases, NULL);
    Py_XDECREF(limit_bases);
    st->str_copy = PyUnicode_InternFromString("__copy__");
    if (st->AlreadyFinalized == NULL || st->LimitExceeded == NULL || st->str_copy == NULL ||
        PyModule_AddObjectRef(m, "AlreadyFinalized", st->AlreadyFinalized) < 0 ||
        PyModule_AddObjectRef(m, "LimitExceeded", st->LimitExceeded) < 0 ||
        PyModule_AddIntConstant(m, "GIL_THRESHOLD", AESKIT_GIL_THRESHOLD) < 0 ||
        aeskit_add_cipher_types(m, st) < 0 || aeskit_add_aead_types(m, st) < 0 ||
        aeskit_add_keywrap_types(m, st) < 0 || aeskit_add_mac_types(m, st) < 0 ||
        aeskit_add_bench(m) < 0 || aeskit_add_slots(m) < 0 || aeskit_add_segments(m) < 0 ||
        aeskit_add_mode_facts(m) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    aeskit_state *st = PyModule_GetState(m);
    Py_VISIT(st->AlreadyFinalized);
    Py_VISIT(st->InvalidTag);
    Py_VISIT(st->NotYetFinalized);
    Py_VISIT(st->LimitExceeded);
    Py_VISIT(st->InvalidUnwrap);
    Py_VISIT(st->str_copy);
    for (size_t i = 0; i < st->ntypes; i++)
        Py_VISIT(st->types[i].type);
    return 0;
}

static int module_clear(PyObject *m)
{
    aeskit_state *st = PyModule_GetState(m);
    Py_CLEAR(st->AlreadyFinalized);
    Py_CLEAR(st->InvalidTag);
    Py_CLEAR(st->NotYetFinalized);
    Py_CLEAR(st->LimitExceeded);
    Py_CLEAR(st->InvalidUnwrap);
    Py_CLEAR(st->str_copy);
    st->cipher_ctx_type = st->aead_ctx_type = st->mac_ctx_type = NULL;
    for (size_t i = 0; i < st->ntypes; i++)
        Py_CLEAR(st->types[i].type);
    st->ntypes = 0;
    return 0;
}

static void module_free(void *m)
{
    module_clear((PyObject *)m);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "aeskit._aeskit",
    .m_doc = "The C core of aeskit.",
    .m_size = sizeof(aeskit_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__aeskit(void)
{
    return PyModuleDef_Init(&module_def);
}
