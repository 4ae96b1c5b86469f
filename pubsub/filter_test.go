package pubsub

import "testing"

func TestFilter(t *testing.T) {
	attrs := map[string]string{"color": "red", "size": "large", "empty": ""}
	cases := []struct {
		src  string
		want bool
		bad  bool
	}{
		{src: ``, want: true},
		{src: `attributes.color = "red"`, want: true},
		{src: `attributes.color != "red"`, want: false},
		{src: `attributes.missing != "x"`, want: true},
		{src: `attributes:empty`, want: true},
		{src: `attributes:nope`, want: false},
		{src: `NOT attributes:nope`, want: true},
		{src: `-attributes:nope`, want: true},
		{src: `hasPrefix(attributes.size, "lar")`, want: true},
		{src: `hasPrefix(attributes.missing, "")`, want: false},
		{src: `attributes.color = "red" AND attributes.size = "small"`, want: false},
		{src: `attributes.color = "blue" OR attributes.size = "large"`, want: true},
		{src: `(attributes.color = "blue" OR attributes.size = "large") AND NOT attributes:x`, want: true},
		{src: `attributes."color" = 'red'`, want: true},
		{src: `attributes.color = "red" AND attributes.a = "b" OR attributes:c`, bad: true},
		{src: `attributes.color = red`, bad: true},
		{src: `attributes.color =`, bad: true},
		{src: `color = "red"`, bad: true},
		{src: `(attributes:a`, bad: true},
		{src: `attributes:a)`, bad: true},
		{src: `attributes.a = "unterminated`, bad: true},
		{src: `attributes:a $`, bad: true},
	}
	for _, c := range cases {
		f, err := ParseFilter(c.src)
		if c.bad {
			if err == nil {
				t.Errorf("%q parsed", c.src)
			} else if Code(err).String() != "InvalidArgument" {
				t.Errorf("%q: %v", c.src, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if got := f.Matches(attrs); got != c.want {
			t.Errorf("%q matches %v, want %v", c.src, got, c.want)
		}
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`attributes.a = "b"`, `NOT (attributes:a OR hasPrefix(attributes.b, "c"))`, `-attributes:x AND attributes.y != 'z'`, `((((`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		flt, err := ParseFilter(src)
		if err != nil {
			if Code(err).String() != "InvalidArgument" {
				t.Fatalf("%q: %v", src, err)
			}
			return
		}
		flt.Matches(map[string]string{"a": "b", "x": ""})
		if flt.String() != src {
			t.Fatal("source not kept")
		}
	})
}
