#!/usr/bin/perl
# Round 65: seed 000's procedure over the wire (docs/protocol.md), with one bug chosen by $ARGV[0]:
#   deadletter3 - an event dead-lettered a third time in one life is quarantined ("redrive limit 3"):
#                 seed 000 step 4, "A transient dead-letter entry ... does not close the prefix"
#   reservecache - the first reservation of an event is kept for the life and every retry calls with it,
#                 never reserving again: seed 001 step 2, "A changed ... authorization context requires a new
#                 reservation and generation"
#   lostbarrier2 - after the second lost barrier reply of a life the worker assumes the barrier took and goes
#                 on from the page's next cursor held in memory, publishing nothing: seed 000 step 6
#   none        - no bug
use strict;
use warnings;
use JSON::PP;

$| = 1;
my $BUG = $ARGV[0] // 'none';
my $json = JSON::PP->new->canonical(0);

sub ask {
    my ($req) = @_;
    print $json->encode($req), "\n";
    my $line = <STDIN>;
    exit 0 unless defined $line;
    return $json->decode($line);
}

my $hello_line = <STDIN>;
exit 0 unless defined $hello_line;
my $hello = $json->decode($hello_line);
if ($hello->{type} ne 'hello' || $hello->{value}{protocol} != 1) {
    print STDERR "unknown protocol\n";
    exit 3;
}
my $contract = $hello->{value}{contract};
my $backfills = $contract->{backfills} ? 1 : 0;
my $external = $contract->{external_sink} ? 1 : 0;
my %TERMINAL = (applied => 1, ignored => 1, quarantined => 1);
my %dead;
my %reservation;
my $lost_barriers = 0;
my $memory_cp;      # lostbarrier2: the checkpoint this worker believes in

sub attempt {
    my $cp = ask({op => 'load'})->{value};
    if (defined $memory_cp) {
        $cp = $memory_cp;
    }
    my $res = ask({op => 'fetch', cursor => $cp->{resume_cursor}});
    return 'lost' if $res->{type} eq 'lost';
    if ($res->{type} eq 'none') {
        ask({op => 'halt', reason => "provider refused cursor"});
        exit 0;
    }
    my $page = $res->{value};
    my $rec = ask({op => 'lookup', events => $page->{events}})->{value};
    my ($outcomes, $ids_at) = ($rec->{outcomes}, $rec->{ids_at});
    my $prev;
    for my $e (@{$page->{events}}) {
        if (defined $prev && $e->{position} <= $prev) {
            ask({op => 'halt', reason => "source-order regression"});
            exit 0;
        }
        $prev = $e->{position};
        my $pos = $e->{position} + 0;
        my $holder = $ids_at->{"$pos"};
        if (defined $holder && $holder ne $e->{id}) {
            ask({op => 'halt', reason => "conflicting identity"});
            exit 0;
        }
        if (!defined $holder && !$backfills && $e->{position} <= $cp->{applied_position}) {
            ask({op => 'halt', reason => "gap"});
            exit 0;
        }
    }
    if (!@{$page->{events}} && $page->{next_cursor} eq $cp->{resume_cursor}) {
        return 'caught_up';
    }
    my $applied = $cp->{applied_position};
    for my $e (@{$page->{events}}) {
        my $o = $outcomes->{$e->{id}};
        if ((defined $o && $TERMINAL{$o}) || (!$backfills && $e->{position} <= $cp->{applied_position})) {
            ask({op => 'skip', event => $e});
            $applied = $e->{position} if $e->{position} > $applied;
            next;
        }
        my $decision = ask({op => 'handle', event => $e})->{value};
        my $target = $e->{position} > $applied ? $e->{position} : $applied;
        my $outcome;
        if ($decision eq 'apply') { $outcome = 'applied' }
        elsif ($decision eq 'ignore') { $outcome = 'ignored' }
        elsif ($decision eq 'quarantine') { $outcome = 'quarantined' }
        elsif ($BUG eq 'deadletter3' && $decision eq 'dead_letter' && ++$dead{$e->{id}} >= 3) {
            $outcome = 'quarantined';
        }
        else { return 'blocked' }
        my $with_effect = $outcome eq 'applied' ? JSON::PP::true : JSON::PP::false;
        if ($outcome eq 'applied' && $external) {
            $with_effect = JSON::PP::false;
            my $r = $reservation{$e->{id}};
            my $committed = 0;
            if (!defined $r) {
                my $op = ask({op => 'reserve', event => $e})->{value};
                $committed = $op->{state} eq 'committed';
                $r = $op->{reservation};
                $reservation{$e->{id}} = $r if $BUG eq 'reservecache';
            }
            if (!$committed) {
                my $reply = ask({op => 'call', event => $e, reservation => $r})->{value};
                my $st = ask({op => 'settle', event => $e, reservation => $r, observation => $reply})->{value};
                return 'blocked' if $st ne 'committed';
            }
        }
        my $c = ask({op => 'commit', event => $e, outcome => $outcome, applied_position => $target,
                     with_effect => $with_effect});
        return 'lost' if $c->{type} eq 'lost';
        $applied = $target;
    }
    return 'caught_up' if $page->{next_cursor} eq $cp->{resume_cursor};
    my $b = ask({op => 'barrier', cursor => $cp->{resume_cursor}, version => $cp->{checkpoint_version},
                 next_cursor => $page->{next_cursor}, next_version => $cp->{checkpoint_version} + 1,
                 applied_position => $applied});
    if ($b->{type} eq 'lost') {
        if ($BUG eq 'lostbarrier2' && ++$lost_barriers >= 2) {
            $memory_cp = {resume_cursor => $page->{next_cursor}, checkpoint_version => $cp->{checkpoint_version} + 1,
                          applied_position => $applied};
        }
        return 'lost';
    }
    if (defined $memory_cp) {
        $memory_cp = {resume_cursor => $page->{next_cursor}, checkpoint_version => $cp->{checkpoint_version} + 1,
                      applied_position => $applied};
        return 'advanced';
    }
    return $b->{value} ? 'advanced' : 'rejected';
}

while (1) {
    my $s = attempt();
    if ($s eq 'caught_up' || $s eq 'blocked') {
        ask({op => 'wait', reason => $s});
    }
}
