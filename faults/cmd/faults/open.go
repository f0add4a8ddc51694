package main

import "github.com/leasehold-go/leasehold/storeurl"

// open opens the store under test by URL, as the leasehold command does.
var open = storeurl.Open
