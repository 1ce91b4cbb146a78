#!/usr/bin/perl
# Round 56, a correct consumer over exec: (docs/protocol.md) in Perl, core modules only: seed 000's procedure
# with all of an event's state rebuilt from the durable store just before it is handled. Before each event it
# loads the checkpoint again (an attempt whose checkpoint moved ends: step 5, "reread state") and looks that
# event's receipt up again (step 4: "If a durable receipt proves the event already has its intended outcome,
# treat it as replayed"), so a receipt another worker wrote meanwhile is a replay. Decoded values go back
# untouched (JSON::PP would send a number used as text as a string): positions are copied before use as keys.
use strict;
use warnings;
use JSON::PP;
$| = 1;
my $json = JSON::PP->new;
my %TERMINAL = map { $_ => 1 } qw(applied ignored quarantined);

sub ask {
    my ($op, %fields) = @_;
    print $json->encode({op => $op, %fields}), "\n";
    my $line = <STDIN>;
    exit 0 unless defined $line;
    my $r = $json->decode($line);
    return ($r->{type}, $r->{value});
}

sub halt { ask('halt', reason => $_[0]); exit 0; }

my $hello_line = <STDIN>;
exit 0 unless defined $hello_line;
my $hello = $json->decode($hello_line);
die "expected protocol 1\n" unless $hello->{type} eq 'hello' && $hello->{value}{protocol} == 1;
my $backfills = $hello->{value}{contract}{backfills} ? 1 : 0;
my $external = $hello->{value}{contract}{external_sink} ? 1 : 0;

sub validate {
    my ($cp, $page, $ids_at) = @_;
    my $previous;
    my $applied = 0 + $cp->{applied_position};
    for my $e (@{$page->{events}}) {
        my $p = 0 + $e->{position};
        return "source-order regression at position $p" if defined $previous && $p <= $previous;
        $previous = $p;
        my $holder = $ids_at->{"$p"};
        return "conflicting identity at position $p" if defined $holder && $holder ne $e->{id};
        return "gap at position $p" if !defined $holder && !$backfills && $p <= $applied;
    }
    return undef;
}

sub commit {
    my ($event, $outcome, $applied, $with_effect) = @_;
    my ($kind, $done) = ask('commit', event => $event, outcome => $outcome, applied_position => $applied,
                            with_effect => $with_effect ? JSON::PP::true : JSON::PP::false);
    return 'lost' if $kind eq 'lost';
    return 'done';
}

sub settle {
    my ($event) = @_;
    my (undef, $op) = ask('reserve', event => $event);
    return 'committed' if $op->{state} eq 'committed';
    my (undef, $reply) = ask('call', event => $event, reservation => $op->{reservation});
    my (undef, $state) = ask('settle', event => $event, reservation => $op->{reservation}, observation => $reply);
    return $state eq 'committed' ? 'committed' : 'blocked';
}

sub attempt {
    my (undef, $cp) = ask('load');
    my $cursor = $cp->{resume_cursor};
    my $version = $cp->{checkpoint_version};
    my ($kind, $page) = ask('fetch', cursor => $cursor);
    return 'lost' if $kind eq 'lost';
    halt("provider refused cursor '$cursor'") if $kind eq 'none';
    my (undef, $receipts) = ask('lookup', events => $page->{events});
    my $problem = validate($cp, $page, $receipts->{ids_at});
    halt($problem) if defined $problem;
    my @events = @{$page->{events}};
    return 'caught_up' if !@events && $page->{next_cursor} eq $cursor;
    my $applied = 0 + $cp->{applied_position};
    for my $event (@events) {
        my $p = 0 + $event->{position};
        my (undef, $now) = ask('load');
        return 'rejected' if $now->{resume_cursor} ne $cursor || $now->{checkpoint_version} != $version;
        my (undef, $mine) = ask('lookup', events => [$event]);
        my $outcome = $mine->{outcomes}{$event->{id}};
        if ((defined $outcome && $TERMINAL{$outcome}) || (!$backfills && $p <= 0 + $cp->{applied_position})) {
            ask('skip', event => $event);
            $applied = $p if $p > $applied;
            next;
        }
        my (undef, $decision) = ask('handle', event => $event);
        my $target = $p > $applied ? $p : $applied;
        my $result;
        if ($decision eq 'apply') {
            if ($external) {
                my $s = settle($event);
                $result = $s eq 'committed' ? commit($event, 'applied', $target, 0) : $s;
            } else {
                $result = commit($event, 'applied', $target, 1);
            }
        } elsif ($decision eq 'ignore') {
            $result = commit($event, 'ignored', $target, 0);
        } elsif ($decision eq 'quarantine') {
            $result = commit($event, 'quarantined', $target, 0);
        } else {
            return 'blocked';
        }
        return $result if $result eq 'lost' || $result eq 'blocked';
        $applied = $target;
    }
    return 'caught_up' if $page->{next_cursor} eq $cursor;
    my ($k, $swapped) = ask('barrier', cursor => $cursor, version => $version, next_cursor => $page->{next_cursor},
                            next_version => $version + 1, applied_position => $applied);
    return 'lost' if $k eq 'lost';
    return $swapped ? 'advanced' : 'rejected';
}

while (1) {
    my $status = attempt();
    ask('wait', reason => $status) if $status eq 'caught_up' || $status eq 'blocked';
}
