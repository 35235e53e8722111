// Package lru is a least-recently-used cache of strings.
package lru

import "container/list"

type entry struct {
	key, value string
}

// Cache holds at most its capacity of entries, evicting the least recently used.
type Cache struct {
	capacity int
	order    *list.List // front: most recently used
	items    map[string]*list.Element
}

// New returns an empty cache holding at most capacity entries (at least one).
func New(capacity int) *Cache {
	if capacity < 1 {
		capacity = 1
	}
	return &Cache{capacity: capacity, order: list.New(), items: map[string]*list.Element{}}
}

// Get returns the value of key, and whether it was there.
func (c *Cache) Get(key string) (string, bool) {
	el, ok := c.items[key]
	if !ok {
		return "", false
	}
	return el.Value.(*entry).value, true
}

// Put sets key to value, evicting the least recently used entry when full.
func (c *Cache) Put(key, value string) {
	if el, ok := c.items[key]; ok {
		el.Value.(*entry).value = value
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&entry{key, value})
	if c.order.Len() > c.capacity {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*entry).key)
	}
}

// Len is the number of entries held.
func (c *Cache) Len() int { return c.order.Len() }
