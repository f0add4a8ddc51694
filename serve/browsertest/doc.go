// Package browsertest tests leasehold serve's dashboard as a person sees
// it: headless Chromium, driven by chromedp, loads the page of a real
// server on the embedded sqlite store. It is a module of its own so that
// serve's users never download chromedp; it has no code but its tests.
package browsertest
