/*
 * slots.c: _aeskit._ctr_slot, one backend's ctr slot called directly.
 *
 * For the tests, not public API: the slot takes three counter kinds, and
 * no public mode uses LE32 yet (GCM-SIV will), so without this the wide
 * kernels' LE32 path would ship unchecked. The tests compare every backend
 * with portable on it, carries included.
 */
#include <string.h>

#include "glue.h"

static int ctr_kind(const char *name, enum aeskit_ctr *kind)
{
    static const struct { const char *name; enum aeskit_ctr kind; } kinds[] = {
        {"be128", AESKIT_CTR_BE128}, {"be32", AESKIT_CTR_BE32}, {"le32", AESKIT_CTR_LE32},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(name, kinds[i].name) == 0) {
            *kind = kinds[i].kind;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "counter kind must be 'be128', 'be32' or 'le32', not '%s'",
                 name);
    return -1;
}

static PyObject *slots_ctr(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *keyobj, *out = NULL, *result = NULL;
    const char *kind_name;
    Py_buffer counter, data;
    if (!PyArg_ParseTuple(args, "Osy*y*:_ctr_slot", &keyobj, &kind_name, &counter, &data))
        return NULL;
    const aeskit_key *key;
    enum aeskit_mode mode;
    enum aeskit_ctr kind;
    if (aeskit_key_of(keyobj, &key, &mode) < 0 || ctr_kind(kind_name, &kind) < 0)
        goto done;
    if (counter.len != 16 || data.len % 16 != 0) {
        PyErr_SetString(PyExc_ValueError, "need a 16-byte counter and whole 16-byte blocks");
        goto done;
    }
    uint8_t c[16];
    memcpy(c, counter.buf, 16);
    out = PyBytes_FromStringAndSize(NULL, data.len);
    if (out == NULL)
        goto done;
    key->impl->ctr(key, kind, c, (uint8_t *)PyBytes_AS_STRING(out), data.buf,
                   (size_t)data.len / 16);
    result = Py_BuildValue("(Oy#)", out, (const char *)c, (Py_ssize_t)16);
done:
    Py_XDECREF(out);
    PyBuffer_Release(&counter);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef slots_methods[] = {
    {"_ctr_slot", slots_ctr, METH_VARARGS,
     PyDoc_STR("_ctr_slot(key_object, kind, counter, data) -> (out, next_counter)\n\n"
               "Tests only: the key object's backend's ctr slot on whole blocks with the "
               "counter kind 'be128', 'be32' or 'le32'.")},
    {NULL, NULL, 0, NULL},
};

int aeskit_add_slots(PyObject *module)
{
    return PyModule_AddFunctions(module, slots_methods);
}
