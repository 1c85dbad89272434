// Package switches holds the pattern switches of lab's reference operator:
// the knobs a learner flips on the running operator to see a pattern's
// effect (how "not done yet" is returned, circuit breaker and rate limiter on
// or off, whose backoff applies, how the simulated external system behaves,
// how fast time runs, how many workers reconcile).
//
// A Switches value is safe for concurrent use: reconciles read it while the
// TUI or a scenario changes it. Every change is emitted as a "switch" event.
// Values can be set one at a time (Set) or from a "k=v,k=v" string (Apply),
// as `lab run --set` does; bad input gives an error that lists the valid
// names or values. Effect says in one line what a value does to the next
// reconciles, which the live view shows when a learner flips a switch;
// EffectIn and BelongsIn say it in the learner's language (internal/l10n
// holds the Russian; the English text is the key).
//
// Not every lab's controller reads every switch: the breaker, ratelimit and
// backoff switches belong to lab 4.4, whose Database controller calls its
// external system through those patterns; lab 3.1's HelloWorld controller
// calls its dependency directly. That fact is written here once (ForLab,
// InLab, OnlyIn); NewForLab's switches refuse, with an error that says
// where the switch belongs, a switch their lab does not read, and the live
// view offers no key for it.
package switches
