/*
 * module.c: the aeskit._aeskit module: CPU detection and the default
 * backend (once, at import), backend lookup by name, the exceptions.
 */
#include <stdlib.h>
#include <string.h>

#include "glue.h"

PyObject *aeskit_AlreadyFinalized;
static const struct aeskit_impl *default_impl;

static PyObject *known_names(void)
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list != NULL && aeskit_impls[i] != NULL; i++) {
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

const struct aeskit_impl *aeskit_resolve_backend(const char *name)
{
    if (strcmp(name, "auto") == 0)
        return default_impl;
    const struct aeskit_impl *impl = aeskit_impl_by_name(name);
    if (impl == NULL) {
        PyObject *names = known_names();
        if (names != NULL)
            PyErr_Format(PyExc_ValueError, "unknown backend '%s': known backends are %R or 'auto'",
                         name, names);
        Py_XDECREF(names);
        return NULL;
    }
    if (!aeskit_impl_available(impl)) {
        char missing[256];
        missing_features(impl, missing, sizeof missing);
        PyErr_Format(PyExc_ValueError,
                     "backend '%s' is not available on this CPU (missing: %s)", name, missing);
        return NULL;
    }
    return impl;
}

static PyObject *mod_backends(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    PyObject *all = known_names(), *avail = PyList_New(0);
    if (all == NULL || avail == NULL)
        goto fail;
    for (size_t i = 0; aeskit_impls[i] != NULL; i++) {
        if (!aeskit_impl_available(aeskit_impls[i]))
            continue;
        PyObject *s = PyUnicode_FromString(aeskit_impls[i]->name);
        if (s == NULL || PyList_Append(avail, s) < 0) {
            Py_XDECREF(s);
            goto fail;
        }
        Py_DECREF(s);
    }
    PyObject *r = Py_BuildValue("(NNs)", PyList_AsTuple(all), PyList_AsTuple(avail),
                                default_impl->name);
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

static PyMethodDef module_methods[] = {
    {"backends", mod_backends, METH_NOARGS,
     PyDoc_STR("backends() -> (all, available, default)")},
    {"cpu_features", mod_cpu_features, METH_NOARGS,
     PyDoc_STR("cpu_features() -> dict of feature name to bool (instructions and OS state)")},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "aeskit._aeskit",
    .m_doc = "The C core of aeskit.",
    .m_size = -1,
    .m_methods = module_methods,
};

/* AESKIT_BACKEND=NAME forces the default; a bad name fails the import. */
static int choose_default(void)
{
    default_impl = aeskit_impl_best();
    const char *env = getenv("AESKIT_BACKEND");
    if (env == NULL || env[0] == '\0')
        return 0;
    const struct aeskit_impl *impl = aeskit_resolve_backend(env);
    if (impl == NULL) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_Format(PyExc_ImportError, "AESKIT_BACKEND=%s: %S", env, value);
        Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(tb);
        return -1;
    }
    default_impl = impl;
    return 0;
}

PyMODINIT_FUNC PyInit__aeskit(void)
{
    aeskit_cpu_detect();
    if (choose_default() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    aeskit_AlreadyFinalized = PyErr_NewExceptionWithDoc(
        "aeskit.AlreadyFinalized",
        "Raised when a streaming context is used after finalize().", NULL, NULL);
    if (aeskit_AlreadyFinalized == NULL ||
        PyModule_AddObjectRef(m, "AlreadyFinalized", aeskit_AlreadyFinalized) < 0 ||
        PyModule_AddIntConstant(m, "GIL_THRESHOLD", AESKIT_GIL_THRESHOLD) < 0 ||
        aeskit_add_cipher_types(m) < 0 || aeskit_add_aead_types(m) < 0 ||
        aeskit_add_bench(m) < 0 || aeskit_add_slots(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
