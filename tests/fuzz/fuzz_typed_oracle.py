# fuzz_typed_oracle.py: what fuzz_typed checks a typed host function against, in
# Python's own terms (run once per process by fuzz_typed.c).
#
# A signature pyhost accepted must read back through inspect.signature, and every
# call must bind as inspect.Signature.bind binds it: a call bind refuses raises
# TypeError; a call it accepts gives the callback each argument (defaults included, as
# inspect shows them) converted by the scalar rules of pyhost.h, or raises when one
# argument breaks them.  Reading an argument runs no Python code: the subclasses below
# record any dunder pyhost would call.  A mismatch raises AssertionError, which
# fuzz_typed turns into a crash naming the signature and the call.
import array
import inspect
import re
import sys

CALLED = []


class IntSub(int):
    def __index__(self): CALLED.append('__index__'); return 7
    def __int__(self): CALLED.append('__int__'); return 8
    def __float__(self): CALLED.append('__float__'); return 9.5
    def __bool__(self): CALLED.append('__bool__'); return False


class FloatSub(float):
    def __float__(self): CALLED.append('__float__'); return 1.25
    def __index__(self): CALLED.append('__index__'); return 3


class StrSub(str):
    def __str__(self): CALLED.append('__str__'); return 'other'


class BytesSub(bytes):
    def __bytes__(self): CALLED.append('__bytes__'); return b'other'


class Bad(Exception):
    """An argument that breaks its parameter's rule: the call must raise."""


POOL = [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 2 ** 64, 10 ** 400,
        True, False, None, 0.5, -0.0, float('inf'), float('nan'), 1e308, 2 ** 53 + 1,
        'x', '', 'h\u00e9\u20ac\U0001f600', '\ud800', 'a\0b', b'', b'\x00\xff', bytearray(b'z'),
        IntSub(5), IntSub(-2 ** 63), FloatSub(2.5), StrSub('s'), BytesSub(b'b'), object(),
        [1], (2,), 3j]
# buffer and rwbuffer arguments (appended: the older indices keep their meaning)
_released = memoryview(b'gone')
_released.release()
POOL += [memoryview(b'ro\x00v'), memoryview(bytearray(b'rw')), memoryview(b'abcdef')[::2],
         memoryview(bytearray(range(12))).cast('i', (3, 1)), array.array('d', [1.5, -2.0]),
         array.array('b'), bytearray(), _released, (memoryview(b'ab').toreadonly() if hasattr(memoryview, 'toreadonly') else b'ab'),
         memoryview(bytearray(b'wxyz'))[1:3]]
IN_PLACE = sys.version_info >= (3, 11)  # any exporter from 3.11; before, see expect_view
EXTRA_NAMES = ['zz', 'X', '_', 'self', StrSub('x')]
TYPES = ('int', 'float', 'bool', 'str', 'bytes', 'buffer', 'rwbuffer')


def declared_types(text):
    """{parameter name: type} of an accepted signature's text."""
    body = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", "''", text)
    return dict(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([A-Za-z_][A-Za-z0-9_]*)", body))


def expect_view(x, writable):
    """What the callback gets for a buffer (writable: rwbuffer) argument x: ('view',
    bytes, readonly, format, itemsize, shape) as pyhost.h says.  From 3.11 any exporter
    in place, C-contiguous only; before, bytes in place (read-only), a bytearray in place,
    any other exporter as a read-only C-ordered copy (so no rwbuffer)."""
    try:
        m = memoryview(x)
        m.tobytes()
    except (TypeError, ValueError):  # no buffer, or a released memoryview
        raise Bad
    is_bytes, is_bytearray = isinstance(x, bytes), isinstance(x, bytearray)
    if IN_PLACE or is_bytes or is_bytearray:
        if writable and m.readonly:
            raise Bad
        if not m.c_contiguous:
            raise Bad
        return ('view', m.tobytes(), m.readonly, m.format, m.itemsize, m.shape)
    if writable:
        raise Bad
    return ('view', m.tobytes(), True, m.format, m.itemsize, m.shape)


def expect(x, t, none_ok):
    """What the callback gets for argument x of type t, as a comparable tuple."""
    if x is None and none_ok:
        return ('None',)
    if t in ('buffer', 'rwbuffer'):
        return expect_view(x, t == 'rwbuffer')
    if t == 'int':
        if type(x) is bool or not isinstance(x, int):
            raise Bad
        v = int.__int__(x)
        if not -2 ** 63 <= v < 2 ** 63:
            raise Bad
        return ('int', v)
    if t == 'float':
        if isinstance(x, float):
            return ('float', repr(float.__float__(x)))
        if isinstance(x, int) and type(x) is not bool:
            try:
                return ('float', repr(float(int.__int__(x))))
            except OverflowError:
                raise Bad
        raise Bad
    if t == 'bool':
        if x is True or x is False:
            return ('bool', x)
        raise Bad
    if t == 'str':
        if not isinstance(x, str):
            raise Bad
        s = str.__str__(x)
        try:
            s.encode('utf-8')
        except UnicodeEncodeError:
            raise Bad
        return ('str', s)
    if not isinstance(x, bytes):
        raise Bad
    return ('bytes', bytes.__getitem__(x, slice(None)))


def got(v):
    if v is None:
        return ('None',)
    if type(v) is bool:
        return ('bool', v)
    if type(v) is int:
        return ('int', v)
    if type(v) is float:
        return ('float', repr(v))
    if type(v) is str:
        return ('str', v)
    if type(v) is bytes:
        return ('bytes', v)
    if type(v) is tuple and len(v) == 5:  # a buffer argument (fuzz_typed.c: view_tuple)
        return ('view', v[0], bool(v[1]), v[2], v[3], tuple(v[4]))
    return ('?', repr(v))


def calls(program, names):
    """The calls a program's bytes describe: (args, kwargs) lists."""
    out, i = [], 0
    names = names + EXTRA_NAMES
    while i + 2 <= len(program) and len(out) < 8:
        npos, nkw = program[i] % 6, program[i + 1] % 4
        i += 2
        args = [POOL[b % len(POOL)] for b in program[i:i + npos]]
        i += npos
        kw = {}
        for _ in range(nkw):
            if i + 2 > len(program):
                break
            kw[names[program[i] % len(names)]] = POOL[program[i + 1] % len(POOL)]
            i += 2
        out.append((args, kw))
    return out


def check(text, sig, call, program):
    """Checks call (f(*args, **kwargs) giving the callback's arguments as a tuple)
    against sig, the signature whose text pyhost accepted."""
    params = list(sig.parameters.values())
    types = declared_types(text)
    names = [p.name for p in params]
    assert names == list(types), 'parameters %r, declared %r' % (names, types)
    assert all(t in TYPES for t in types.values()), types
    for args, kw in calls(program, names):
        what = '%s called with %r %r' % (text, args, kw)
        del CALLED[:]
        try:
            bound = sig.bind(*args, **kw)
        except TypeError:
            bound = None
        want = None
        if bound is not None:
            bound.apply_defaults()
            try:
                want = [expect(bound.arguments[p.name], types[p.name], p.default is None)
                        for p in params]
            except Bad:
                want = 'raises'
        try:
            result = call(*args, **kw)
        except (TypeError, OverflowError, UnicodeError, ValueError) as e:
            assert bound is None or want == 'raises', '%s: raised %r, want %r' % (what, e, want)
            assert bound is not None or isinstance(e, TypeError), '%s: %r' % (what, e)
        else:
            assert bound is not None, '%s: inspect refuses it, pyhost returned %r' % (what, result)
            assert want != 'raises', '%s: returned %r, an argument breaks its rule' % (what, result)
            assert isinstance(result, tuple) and [got(v) for v in result] == want, \
                '%s: the callback got %r, want %r' % (what, result, want)
        assert not CALLED, '%s: reading the arguments ran %r' % (what, CALLED)
