package value

import (
	"math"
	"math/bits"
	"time"
)

const (
	addExpected = "int + int, float + float, string + string, duration + duration, duration + timestamp, timestamp + duration"
	subExpected = "int - int, float - float, duration - duration, timestamp - duration, timestamp - timestamp"
	mulExpected = "int * int, float * float"
	divExpected = "int / int, float / float"
	modExpected = "int % int, float % float"
)

// Arith applies a binary arithmetic operator: + - * / %.
func Arith(op string, a, b Value) Value {
	if x, y, ok := floats(a, b); ok {
		switch op {
		case "+":
			return Float(x + y)
		case "-":
			return Float(x - y)
		case "*":
			return Float(x * y)
		case "/":
			return Float(x / y)
		case "%":
			return Float(math.Mod(x, y))
		}
	}
	if x, ok := a.(Int); ok {
		if y, ok := b.(Int); ok {
			return intArith(op, int64(x), int64(y))
		}
	}
	switch op {
	case "+":
		switch x := a.(type) {
		case String:
			if y, ok := b.(String); ok {
				return x + y
			}
		case Duration:
			switch y := b.(type) {
			case Duration:
				return addDurations(x, y)
			case Timestamp:
				return addToTimestamp(y, x)
			}
		case Timestamp:
			if y, ok := b.(Duration); ok {
				return addToTimestamp(x, y)
			}
		}
		return ErrUnsupportedOp(a.Type().String()+" + "+b.Type().String(), addExpected)
	case "-":
		switch x := a.(type) {
		case Duration:
			if y, ok := b.(Duration); ok {
				return addDurations(x, negDuration(y))
			}
		case Timestamp:
			switch y := b.(type) {
			case Duration:
				return addToTimestamp(x, negDuration(y))
			case Timestamp:
				return subTimestamps(x, y)
			}
		}
		return ErrUnsupportedOp(a.Type().String()+" - "+b.Type().String(), subExpected)
	case "*":
		return ErrUnsupportedOp(a.Type().String()+" * "+b.Type().String(), mulExpected)
	case "/":
		return ErrUnsupportedOp(a.Type().String()+" / "+b.Type().String(), divExpected)
	case "%":
		return ErrUnsupportedOp(a.Type().String()+" % "+b.Type().String(), modExpected)
	}
	return Errorf("unknown operator %s", op)
}

// floats returns both operands as floats when at least one is a float and
// the other a number: int op float promotes to float.
func floats(a, b Value) (float64, float64, bool) {
	var x, y float64
	fa, aIsFloat := a.(Float)
	fb, bIsFloat := b.(Float)
	if !aIsFloat && !bIsFloat {
		return 0, 0, false
	}
	switch a := a.(type) {
	case Float:
		x = float64(fa)
	case Int:
		x = float64(a)
	default:
		return 0, 0, false
	}
	switch b := b.(type) {
	case Float:
		y = float64(fb)
	case Int:
		y = float64(b)
	default:
		return 0, 0, false
	}
	return x, y, true
}

func intArith(op string, x, y int64) Value {
	switch op {
	case "+":
		s := x + y
		if (x > 0 && y > 0 && s < 0) || (x < 0 && y < 0 && s >= 0) {
			return ErrIntRange()
		}
		return Int(s)
	case "-":
		d := x - y
		if (x >= 0 && y < 0 && d < 0) || (x < 0 && y > 0 && d >= 0) {
			return ErrIntRange()
		}
		return Int(d)
	case "*":
		hi, lo := bits.Mul64(uint64(abs64(x)), uint64(abs64(y)))
		neg := (x < 0) != (y < 0)
		if x == math.MinInt64 || y == math.MinInt64 {
			if x == 0 || y == 0 {
				return Int(0)
			}
			if x == 1 || y == 1 {
				return Int(x * y)
			}
			return ErrIntRange()
		}
		if hi != 0 || lo > math.MaxInt64+boolU(neg) {
			return ErrIntRange()
		}
		return Int(x * y)
	case "/":
		if y == 0 {
			return ErrDivideByZero()
		}
		if x == math.MinInt64 && y == -1 {
			return ErrIntRange()
		}
		return Int(x / y) // Go truncates toward zero, as production does
	case "%":
		if y == 0 {
			return ErrDivideByZero()
		}
		if y == -1 {
			return Int(0)
		}
		return Int(x % y) // sign of the dividend: -7 % 2 == -1
	}
	return Errorf("unknown operator %s", op)
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Negate applies unary minus.
func Negate(v Value) Value {
	switch x := v.(type) {
	case Int:
		if x == math.MinInt64 {
			return ErrIntRange()
		}
		return -x
	case Float:
		return -x
	case Duration:
		return negDuration(x)
	}
	return ErrUnsupportedOp("-"+v.Type().String(), "-int, -float, -duration")
}

// Not applies logical negation; the operand must be a bool.
func Not(v Value) Value {
	if b, ok := v.(Bool); ok {
		return !b
	}
	return ErrUnsupportedOp("!"+v.Type().String(), "!bool")
}

// MinTime and MaxTime bound timestamps, as production's do.
var (
	MinTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// maxDurationSeconds bounds durations (about ±10,000 years).
const maxDurationSeconds = 315576000000

// NewDuration normalises seconds and nanos so they share a sign.
func NewDuration(seconds int64, nanos int64) Value {
	seconds += nanos / 1e9
	nanos %= 1e9
	if seconds > 0 && nanos < 0 {
		seconds--
		nanos += 1e9
	} else if seconds < 0 && nanos > 0 {
		seconds++
		nanos -= 1e9
	}
	if seconds > maxDurationSeconds || seconds < -maxDurationSeconds {
		return Errorf("Duration value is out of range.")
	}
	return Duration{Seconds: seconds, Nanos: int32(nanos)}
}

// Nanoseconds returns the duration in nanoseconds when it fits in an int64.
func (d Duration) Nanoseconds() (int64, bool) {
	hi, lo := bits.Mul64(uint64(abs64(d.Seconds)), 1e9)
	if hi != 0 || lo > math.MaxInt64/2 {
		return 0, false
	}
	return d.Seconds*1e9 + int64(d.Nanos), true
}

func negDuration(d Duration) Duration { return Duration{Seconds: -d.Seconds, Nanos: -d.Nanos} }

func addDurations(a, b Duration) Value {
	return NewDuration(a.Seconds+b.Seconds, int64(a.Nanos)+int64(b.Nanos))
}

func addToTimestamp(t Timestamp, d Duration) Value {
	r := t.Add(time.Duration(d.Seconds)*time.Second + time.Duration(d.Nanos))
	if d.Seconds > math.MaxInt64/int64(time.Second) || d.Seconds < math.MinInt64/int64(time.Second) {
		r = time.Unix(t.Unix()+d.Seconds, int64(t.Nanosecond())+int64(d.Nanos)).UTC()
	}
	return NewTimestamp(r)
}

func subTimestamps(a, b Timestamp) Value {
	return NewDuration(a.Unix()-b.Unix(), int64(a.Nanosecond())-int64(b.Nanosecond()))
}

// NewTimestamp checks the range and returns a UTC timestamp.
func NewTimestamp(t time.Time) Value {
	if t.Before(MinTime) || t.After(MaxTime) {
		return Errorf("Timestamp value is out of range.")
	}
	return Timestamp{t.UTC()}
}
