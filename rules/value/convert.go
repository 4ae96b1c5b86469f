package value

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// FromGo converts Go data into a rules value: nil, bool, all int and float
// kinds, string, []byte, time.Time, time.Duration, json.Number (integral
// text is an int, anything with a fraction or exponent a float), []any,
// map[string]any, and Values themselves.
func FromGo(v any) (Value, error) {
	switch v := v.(type) {
	case nil:
		return Null{}, nil
	case Value:
		return v, nil
	case bool:
		return Bool(v), nil
	case int:
		return Int(v), nil
	case int8:
		return Int(v), nil
	case int16:
		return Int(v), nil
	case int32:
		return Int(v), nil
	case int64:
		return Int(v), nil
	case uint8:
		return Int(v), nil
	case uint16:
		return Int(v), nil
	case uint32:
		return Int(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("integer %d is out of range", v)
		}
		return Int(v), nil
	case float32:
		return Float(v), nil
	case float64:
		return Float(v), nil
	case json.Number:
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			i, err := v.Int64()
			if err != nil {
				return nil, fmt.Errorf("integer %s is out of range", s)
			}
			return Int(i), nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", s, err)
		}
		return Float(f), nil
	case string:
		return String(v), nil
	case []byte:
		return Bytes(v), nil
	case time.Time:
		return Timestamp{v.UTC()}, nil
	case time.Duration:
		return NewDuration(0, int64(v)), nil
	case []any:
		out := make(List, len(v))
		for i, x := range v {
			e, err := FromGo(x)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = e
		}
		return out, nil
	case []string:
		out := make(List, len(v))
		for i, x := range v {
			out[i] = String(x)
		}
		return out, nil
	case map[string]any:
		out := make(Map, len(v))
		for k, x := range v {
			e, err := FromGo(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// MustFromGo is FromGo for values known to convert; it returns an error
// value instead of panicking when they don't.
func MustFromGo(v any) Value {
	out, err := FromGo(v)
	if err != nil {
		return Errorf("%v", err)
	}
	return out
}
