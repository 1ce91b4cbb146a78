#!/usr/bin/env perl
# Seed 000's full procedure (steps 1-7) with seed 001's settlement of an external effect,
# written from docs/protocol.md, docs/vocabulary.md and docs/hooks.md alone.
# Core modules only. Speaks simkit's JSON-lines protocol (protocol 1) on stdin/stdout.
use v5.36;
use strict;
use warnings;
use IO::Handle;
use JSON::PP;

binmode STDIN;
binmode STDOUT;
STDOUT->autoflush(1);

my $JSON = JSON::PP->new->utf8->allow_nonref;
my %TERMINAL = (applied => 1, ignored => 1, quarantined => 1);

# A result is {type, value}. EOF: simkit is done with this life.
sub read_result () {
    my $line = <STDIN>;
    exit 0 unless defined $line;
    return $JSON->decode($line);
}

sub request ($req) {
    print STDOUT $JSON->encode($req), "\n";
    return read_result();
}

sub is_lost ($res) { return $res->{type} eq 'lost' }

# Numbers are read only in numeric context (never stringified in place), so that
# events and reservations are sent back exactly as they came: integers stay integers.
sub pos_of ($event) { return 0 + $event->{position} }
sub key_of ($n) { my $copy = $n; return "$copy" }

my $hello = read_result();
exit 0 unless $hello->{type} eq 'hello' && ($hello->{value}{protocol} // 0) == 1;
my $contract = $hello->{value}{contract} // {};
my $backfills = $contract->{backfills} ? 1 : 0;
my $external = $contract->{external_sink} ? 1 : 0;

sub halt ($reason) {
    print STDOUT $JSON->encode({op => 'halt', reason => $reason}), "\n";
    1 while defined <STDIN>;            # never answered: the process is killed
    exit 0;
}

# Step 3: validate source order against the provider contract.
sub validate ($checkpoint, $page, $ids_at) {
    my $loaded = 0 + $checkpoint->{applied_position};
    my ($prev_pos, $prev_id);
    my %seen;
    for my $event (@{ $page->{events} }) {
        my $p = pos_of($event);
        my $id = $event->{id};
        if (defined $prev_pos) {
            return "regression: $id at " . key_of($p) . " after position " . key_of($prev_pos) if $p < $prev_pos;
        }
        if (exists $seen{ key_of($p) } && $seen{ key_of($p) } ne $id) {
            return "two ids at position " . key_of($p) . ": $seen{ key_of($p) } and $id";
        }
        $seen{ key_of($p) } = $id;
        my $holder = $ids_at->{ key_of($p) };
        if (defined $holder && $holder ne $id) {
            return "two ids at position " . key_of($p) . ": $holder holds a receipt, the page has $id";
        }
        if (!$backfills && $p <= $loaded && !defined $holder) {
            return "gap: $id at " . key_of($p) . " behind applied_position " . key_of($loaded) . " without backfills";
        }
        ($prev_pos, $prev_id) = ($p, $id);
    }
    return undef;
}

# Seed 001: reserve, call with exactly that reservation, settle. 'committed', 'blocked' or 'lost'.
sub settle_effect ($event) {
    my $res = request({op => 'reserve', event => $event});
    return 'lost' if is_lost($res);
    my $operation = $res->{value};
    return 'committed' if $operation->{state} eq 'committed';
    my $reservation = $operation->{reservation};
    $res = request({op => 'call', event => $event, reservation => $reservation});
    return 'lost' if is_lost($res);
    my $observation = $res->{value};   # the reply object, or the string "timeout"
    $res = request({op => 'settle', event => $event, reservation => $reservation, observation => $observation});
    return 'lost' if is_lost($res);
    return $res->{value} eq 'committed' ? 'committed' : 'blocked';
}

# Commit a terminal receipt. Returns 'done' (durable, by us or already), 'lost' or 'blocked'.
sub commit_outcome ($event, $outcome, $applied_position, $with_effect) {
    my $res = request({op => 'commit', event => $event, outcome => $outcome,
                       applied_position => $applied_position + 0,
                       with_effect => $with_effect ? JSON::PP::true : JSON::PP::false});
    return 'lost' if is_lost($res);
    return 'done';                      # true, or false: a terminal receipt already exists
}

# Steps 1-5: one attempt at one page.
sub attempt () {
    my $res = request({op => 'load'});
    return 'lost' if is_lost($res);
    my $checkpoint = $res->{value};
    my $cursor = $checkpoint->{resume_cursor};
    my $version = 0 + $checkpoint->{checkpoint_version};

    $res = request({op => 'fetch', cursor => $cursor});
    return 'lost' if is_lost($res);
    halt("the provider refused cursor $cursor") if $res->{type} eq 'none';
    my $page = $res->{value};
    my @events = @{ $page->{events} };
    my $next_cursor = $page->{next_cursor};   # kept in memory, not published yet

    # Step 7: an empty page with the request's own token: caught up.
    return 'caught_up' if !@events && $next_cursor eq $cursor;

    my ($outcomes, $ids_at) = ({}, {});
    if (@events) {
        $res = request({op => 'lookup', events => \@events});
        return 'lost' if is_lost($res);
        $outcomes = $res->{value}{outcomes} // {};
        $ids_at = $res->{value}{ids_at} // {};
    }

    my $why = validate($checkpoint, $page, $ids_at);
    halt($why) if defined $why;

    # Step 4: process in source order; stop at the first outcome not durable and terminal.
    my $applied = 0 + $checkpoint->{applied_position};
    for my $event (@events) {
        my $p = pos_of($event);
        my $through = $p > $applied ? $p : $applied;
        my $receipt = $outcomes->{ $event->{id} };
        my $replay = (defined $receipt && $TERMINAL{$receipt})
            || (!$backfills && $p <= $applied && defined $ids_at->{ key_of($p) });
        if ($replay) {
            $res = request({op => 'skip', event => $event});
            return 'lost' if is_lost($res);
            $applied = $through;
            next;
        }
        $res = request({op => 'handle', event => $event});
        return 'lost' if is_lost($res);
        my $decision = $res->{value};
        my $status;
        if ($decision eq 'apply') {
            if ($external) {
                my $settled = settle_effect($event);
                return $settled unless $settled eq 'committed';
                $status = commit_outcome($event, 'applied', $through, 0);
            } else {
                $status = commit_outcome($event, 'applied', $through, 1);
            }
        } elsif ($decision eq 'ignore') {
            $status = commit_outcome($event, 'ignored', $through, 0);
        } elsif ($decision eq 'quarantine') {
            $status = commit_outcome($event, 'quarantined', $through, 0);
        } else {
            return 'blocked';           # non-terminal: the barrier stays closed (invariant 5)
        }
        return $status unless $status eq 'done';
        $applied = $through;
    }

    # Step 5: the page barrier, a compare-and-swap from the attempt's identity.
    $res = request({op => 'barrier', cursor => $cursor, version => $version,
                    next_cursor => $next_cursor, next_version => $version + 1,
                    applied_position => $applied + 0});
    return 'lost' if is_lost($res);
    return $res->{value} ? 'advanced' : 'rejected';
}

# The worker's life: attempt pages one after the other, backing off when caught up or blocked.
while (1) {
    my $result = attempt();
    if ($result eq 'caught_up' || $result eq 'blocked') {
        request({op => 'wait', reason => $result});
    }
}
