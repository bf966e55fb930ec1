"""Small helpers with no dependency on the rest of sagent (json.py: freezing JSON values; lazy.py: names a
package loads on first use; words.py: counts in words, `1 line` and `2 lines`)."""
