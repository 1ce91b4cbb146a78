#!/usr/bin/perl
# Seed 000 over the wire, in Perl (core JSON::PP only). Differs from the reference consumer:
#  - a lost fetch is retried with the same cursor up to 6 times, with a `wait blocked` between (a fetch
#    publishes nothing, so the attempt identity stands and the barrier still compares it: step 5);
#  - replays are skipped without a `skip` note (it executes nothing);
#  - a receipt ledger is kept in memory across attempts and reconciled with the store on every attempt
#    (`lookup`): only the store's answer decides a replay, the ledger only spares a second `handle` of an
#    event whose commit answered in this life (a commit answered true or false leaves a terminal receipt);
#  - --every K: a `load` every K commits, giving the attempt up if the checkpoint moved (step 5);
#  - --commit-late: commits hold the loaded applied_position, the barrier raises it (invariant 2 forbids
#    raising it early, not late).
use strict;
use warnings;
use JSON::PP;
use IO::Handle;
STDOUT->autoflush(1);
my $json = JSON::PP->new->canonical(1);
my %opt = (every => 0, late => 0);
while (@ARGV) {
    my $a = shift @ARGV;
    if ($a eq '--every') { $opt{every} = shift @ARGV; }
    elsif ($a eq '--commit-late') { $opt{late} = 1; }
}
my %TERMINAL = map { $_ => 1 } qw(applied ignored quarantined);
my %OUTCOME = (apply => 'applied', ignore => 'ignored', quarantine => 'quarantined');
my %ledger;

sub ask {
    my ($req) = @_;
    print $json->encode($req), "\n";
    my $line = <STDIN>;
    exit 0 unless defined $line;
    my $msg = $json->decode($line);
    die "LOST\n" if $msg->{type} eq 'lost';
    return $msg->{value};
}

sub validate {
    my ($cp, $page, $ids_at, $backfills) = @_;
    my ($last, %seen);
    for my $e (@{ $page->{events} }) {
        return "regression" if defined $last && $e->{position} <= $last;
        return "id twice" if $seen{ $e->{id} }++;
        $last = $e->{position};
        my $holder = $ids_at->{ 0 + $e->{position} };
        return "conflicting identity" if defined $holder && $holder ne $e->{id};
        return "gap" if !$backfills && $e->{position} <= $cp->{applied_position} && !defined $holder;
    }
    return undef;
}

sub settle {
    my ($e) = @_;
    my $op = ask({ op => 'reserve', event => $e });
    return 1 if $op->{state} eq 'committed';
    my $obs = ask({ op => 'call', event => $e, reservation => $op->{reservation} });
    my $state = ask({ op => 'settle', event => $e, reservation => $op->{reservation}, observation => $obs });
    return $state eq 'committed';
}

sub attempt {
    my ($c) = @_;
    my $cp = ask({ op => 'load' });
    my $page;
    for my $try (0 .. 6) {
        $page = eval { ask({ op => 'fetch', cursor => $cp->{resume_cursor} }) };
        if ($@) { die $@ unless $@ eq "LOST\n"; ask({ op => 'wait', reason => 'blocked' }); next; }
        last;
    }
    die "LOST\n" if $@;
    ask({ op => 'halt', reason => 'refused cursor' }) unless defined $page;
    my $rec = ask({ op => 'lookup', events => $page->{events} });
    my $why = validate($cp, $page, $rec->{ids_at}, $c->{backfills});
    ask({ op => 'halt', reason => $why }) if $why;
    my $same = $page->{next_cursor} eq $cp->{resume_cursor};
    return 'caught_up' if !@{ $page->{events} } && $same;
    %ledger = map { $_ => 1 } grep { $TERMINAL{ $rec->{outcomes}{$_} } } keys %{ $rec->{outcomes} };
    my $prefix = $cp->{applied_position};
    my $commits = 0;
    for my $e (@{ $page->{events} }) {
        my $replay = $ledger{ $e->{id} } || (!$c->{backfills} && $e->{position} <= $cp->{applied_position});
        if (!$replay) {
            my $d = ask({ op => 'handle', event => $e });
            return 'blocked' unless exists $OUTCOME{$d};
            if ($d eq 'apply' && $c->{external_sink}) { return 'blocked' unless settle($e); }
            if ($opt{every} && $commits && $commits % $opt{every} == 0) {
                my $now = ask({ op => 'load' });
                return 'rejected' if $now->{resume_cursor} ne $cp->{resume_cursor}
                    || $now->{checkpoint_version} != $cp->{checkpoint_version};
            }
            my $p = $e->{position} > $prefix ? $e->{position} : $prefix;
            ask({ op => 'commit', event => $e, outcome => $OUTCOME{$d},
                  applied_position => ($opt{late} ? $cp->{applied_position} : $p),
                  with_effect => ($d eq 'apply' && !$c->{external_sink}) ? JSON::PP::true : JSON::PP::false });
            $commits++;
            $ledger{ $e->{id} } = 1;
        }
        $prefix = $e->{position} if $e->{position} > $prefix;
    }
    return 'caught_up' if $same;
    ask({ op => 'barrier', cursor => $cp->{resume_cursor}, version => $cp->{checkpoint_version},
          next_cursor => $page->{next_cursor}, next_version => $cp->{checkpoint_version} + 1,
          applied_position => $prefix });
    return 'advanced';
}

my $hello = $json->decode(scalar <STDIN>);
if ($hello->{value}{protocol} != 1) { print STDERR "unknown protocol\n"; exit 3; }
my $contract = $hello->{value}{contract};
while (1) {
    my $status = eval { attempt($contract) };
    if ($@) { die $@ unless $@ eq "LOST\n"; next; }
    ask({ op => 'wait', reason => $status }) if $status eq 'caught_up' || $status eq 'blocked';
}
