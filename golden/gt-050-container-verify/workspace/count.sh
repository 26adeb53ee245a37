#!/bin/sh
# Prints how many lines greeting.txt has.
echo "not written yet"
