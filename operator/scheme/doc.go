// Package scheme builds the one runtime.Scheme lab's operator uses: every
// built-in client-go type plus the operator's own API (HelloWorld, Database).
package scheme
