package lru

import "testing"

func TestGetCountsAsUse(t *testing.T) {
	c := New(2)
	c.Put("a", "1")
	c.Put("b", "2")
	c.Get("a")
	c.Put("c", "3")
	if _, ok := c.Get("a"); !ok {
		t.Fatal("a was read last and should still be there")
	}
	if _, ok := c.Get("b"); ok {
		t.Fatal("b was the least recently used and should be gone")
	}
}

func TestUpdateCountsAsUse(t *testing.T) {
	c := New(2)
	c.Put("a", "1")
	c.Put("b", "2")
	c.Put("a", "10")
	c.Put("c", "3")
	if v, ok := c.Get("a"); !ok || v != "10" {
		t.Fatalf("Get(a) = %q, %v; want 10, true", v, ok)
	}
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
}
