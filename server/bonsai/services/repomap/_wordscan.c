/* The distinct stemmed words of a source file, in C.
 *
 * ``source_stems(source, stop, min_len, max_len)`` returns what words.py's
 * ``_stems_of(_source_words(source))`` returns, with ``stop``, ``min_len`` and
 * ``max_len`` being words.py's STOP, MIN_LEN and MAX_LEN:
 *
 *   1. the source is cut into runs of ASCII letters (every other byte, UTF-8
 *      included, separates them);
 *   2. a run with a capital letter is cut into the tokens of the pattern
 *      ``[A-Z]?[a-z]+|[A-Z]+(?![a-z])`` (so ``HTTPServer`` gives ``HTTP`` and
 *      ``Server``), an all-lower-case run is one token;
 *   3. each token is lower-cased; one shorter than ``min_len``, longer than
 *      ``max_len`` or in ``stop`` is dropped, the others are reduced by
 *      words.py's ``stem`` and collected in a set.
 *
 * Python meets each distinct token once (a source of 100 KB holds ~20,000
 * tokens but ~2,000 distinct ones): the scan and the de-duplication run
 * without the GIL over the bytes, in a table of fixed-size keys. words.py
 * keeps the same function in Python, used when this module is not built;
 * tests/repomap/test_wordscan.py checks that the two agree.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define KEY_MAX 32 /* longest token kept: max_len must be below this */

typedef struct {
    uint32_t hash; /* 0: empty slot (a real hash is made odd) */
    uint8_t len;
    char key[KEY_MAX];
} Slot;

typedef struct {
    Slot *slots;
    size_t mask; /* capacity - 1, capacity a power of two */
    size_t used;
} Table;

static int table_init(Table *t, size_t capacity) {
    t->slots = calloc(capacity, sizeof(Slot));
    t->mask = capacity - 1;
    t->used = 0;
    return t->slots != NULL;
}

static int table_grow(Table *t) {
    size_t capacity = (t->mask + 1) * 2;
    Slot *old = t->slots;
    size_t old_capacity = t->mask + 1;
    Slot *slots = calloc(capacity, sizeof(Slot));
    if (slots == NULL)
        return 0;
    for (size_t i = 0; i < old_capacity; i++) {
        if (old[i].hash == 0)
            continue;
        size_t j = old[i].hash & (capacity - 1);
        while (slots[j].hash != 0)
            j = (j + 1) & (capacity - 1);
        slots[j] = old[i];
    }
    free(old);
    t->slots = slots;
    t->mask = capacity - 1;
    return 1;
}

/* Add the lower-case token ``key`` (``len`` < KEY_MAX bytes); 0 when out of memory. */
static int table_add(Table *t, const char *key, size_t len) {
    uint32_t hash = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        hash = (hash ^ (uint8_t)key[i]) * 16777619u;
    hash |= 1u;
    size_t j = hash & t->mask;
    while (t->slots[j].hash != 0) {
        Slot *s = &t->slots[j];
        if (s->hash == hash && s->len == len && memcmp(s->key, key, len) == 0)
            return 1;
        j = (j + 1) & t->mask;
    }
    Slot *s = &t->slots[j];
    s->hash = hash;
    s->len = (uint8_t)len;
    memcpy(s->key, key, len);
    t->used++;
    if (2 * t->used > t->mask + 1)
        return table_grow(t);
    return 1;
}

static inline int is_lower(uint8_t c) { return c >= 'a' && c <= 'z'; }
static inline int is_upper(uint8_t c) { return c >= 'A' && c <= 'Z'; }

enum { OTHER = 0, LOWER = 1, UPPER = 2 };
static uint8_t letter_class[256]; /* filled by the module's init */

typedef struct {
    Table table;
    size_t min_len, max_len;
    int failed; /* out of memory */
} Scan;

static void emit(Scan *scan, const uint8_t *token, size_t len) {
    if (len < scan->min_len || len > scan->max_len || scan->failed)
        return;
    char lower[KEY_MAX];
    for (size_t i = 0; i < len; i++)
        lower[i] = (char)(is_upper(token[i]) ? token[i] + ('a' - 'A') : token[i]);
    if (!table_add(&scan->table, lower, len))
        scan->failed = 1;
}

/* The tokens of one run of letters [start, end) holding a capital letter. */
static void emit_mixed(Scan *scan, const uint8_t *b, size_t start, size_t end) {
    size_t j = start;
    while (j < end) {
        size_t k = j;
        if (is_lower(b[j])) { /* [a-z]+ */
            while (k < end && is_lower(b[k]))
                k++;
        } else {
            size_t u = j;
            while (u < end && is_upper(b[u]))
                u++;
            if (u == end) { /* [A-Z]+ to the end of the run */
                k = u;
            } else if (u - j == 1) { /* [A-Z][a-z]+ */
                k = u;
                while (k < end && is_lower(b[k]))
                    k++;
            } else { /* [A-Z]+ not followed by its last capital's lower-case tail */
                k = u - 1;
            }
        }
        emit(scan, b + j, k - j);
        j = k;
    }
}

static void scan_source(Scan *scan, const uint8_t *b, size_t size) {
    size_t i = 0;
    while (i < size && !scan->failed) {
        while (i < size && letter_class[b[i]] == OTHER)
            i++;
        if (i == size)
            break;
        size_t start = i;
        int mixed = 0;
        uint8_t c;
        while (i < size && (c = letter_class[b[i]]) != OTHER) {
            mixed |= c;
            i++;
        }
        mixed &= UPPER;
        if (mixed)
            emit_mixed(scan, b, start, i);
        else
            emit(scan, b + start, i - start);
    }
}

/* words.py's ``stem`` on a lower-case word: the length of the kept part and
 * the replacement appended to it. */
static size_t stem(const char *w, size_t n, const char **repl) {
    static const char *endings[][2] = {{"ies", "y"}, {"sses", "ss"}, {"es", "e"},
                                       {"s", ""},    {"ing", ""},    {"ed", ""}};
    for (size_t e = 0; e < sizeof endings / sizeof endings[0]; e++) {
        size_t len = strlen(endings[e][0]);
        if (n >= len + 3 && memcmp(w + n - len, endings[e][0], len) == 0) {
            if (len == 1 && (w[n - 2] == 's' || w[n - 2] == 'u' || w[n - 2] == 'i')) {
                *repl = "";
                return n; /* ends in ss, us or is: kept whole */
            }
            *repl = endings[e][1];
            return n - len;
        }
    }
    *repl = "";
    return n;
}

static PyObject *source_stems(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer source;
    PyObject *stop;
    Py_ssize_t min_len, max_len;
    if (!PyArg_ParseTuple(args, "y*O!nn", &source, &PyFrozenSet_Type, &stop, &min_len, &max_len))
        return NULL;
    if (min_len < 1 || max_len < min_len || max_len >= KEY_MAX) {
        PyBuffer_Release(&source);
        PyErr_Format(PyExc_ValueError, "word lengths must be within 1..%d", KEY_MAX - 1);
        return NULL;
    }
    Scan scan = {.min_len = (size_t)min_len, .max_len = (size_t)max_len, .failed = 0};
    if (!table_init(&scan.table, 1024)) {
        PyBuffer_Release(&source);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    scan_source(&scan, source.buf, (size_t)source.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&source);
    if (scan.failed) {
        free(scan.table.slots);
        return PyErr_NoMemory();
    }
    PyObject *out = PySet_New(NULL);
    for (size_t i = 0; out != NULL && i <= scan.table.mask; i++) {
        Slot *s = &scan.table.slots[i];
        if (s->hash == 0)
            continue;
        PyObject *word = PyUnicode_FromStringAndSize(s->key, s->len);
        int stopped = word == NULL ? -1 : PySet_Contains(stop, word);
        Py_XDECREF(word);
        if (stopped != 0) {
            if (stopped < 0)
                Py_CLEAR(out);
            continue;
        }
        const char *repl;
        size_t kept = stem(s->key, s->len, &repl);
        char stemmed[KEY_MAX + 4];
        size_t extra = strlen(repl);
        memcpy(stemmed, s->key, kept);
        memcpy(stemmed + kept, repl, extra);
        PyObject *value = PyUnicode_FromStringAndSize(stemmed, (Py_ssize_t)(kept + extra));
        if (value == NULL || PySet_Add(out, value) < 0)
            Py_CLEAR(out);
        Py_XDECREF(value);
    }
    free(scan.table.slots);
    return out;
}

static PyMethodDef methods[] = {
    {"source_stems", source_stems, METH_VARARGS,
     "source_stems(source, stop, min_len, max_len) -> set[str]: the distinct stemmed words of "
     "source (words.py's _stems_of(_source_words(source)))."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_wordscan",
    .m_doc = "The distinct stemmed words of a source file, in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__wordscan(void) {
    for (int c = 0; c < 256; c++)
        letter_class[c] = is_lower((uint8_t)c) ? LOWER : is_upper((uint8_t)c) ? UPPER : OTHER;
    return PyModule_Create(&module);
}
