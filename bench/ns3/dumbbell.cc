// The dumbbell of `ccfair bench` case B in ns-3, for `make bench-ns3` (bench/ns3/compare.py): N Cubic flows
// through one FIFO bottleneck, every flow with the same base RTT, for a fixed simulated time. It prints one
// line of `key=value` pairs: the wall seconds of Simulator::Run, ns-3's event count, and the bytes the
// receivers got (so that a run that moved nothing does not pass for a fast one).
//
// Topology: each sender has its own access link (10x the bottleneck rate) to the left router, the routers
// are joined by the bottleneck, and each receiver hangs off the right router likewise. One-way delays:
// access 0.25 ms on each side, bottleneck rtt/2 - 0.5 ms, so every flow's base RTT is `rtt`. The
// bottleneck's queue is a FIFO queue disc of `buffer` packets; the device queue under it holds one packet,
// so the FIFO is the only buffer (as the simulator's bottleneck). TCP: Cubic, SACK on (ns-3's default),
// 1448-byte segments, initial window 10, send and receive buffers large enough never to limit a flow.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-layout-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t flows = 10;
    std::string rate = "1Gbps";
    double rttMs = 10.0;
    uint32_t bufferPackets = 417;
    double seconds = 10.0;
    CommandLine cmd;
    cmd.AddValue("flows", "number of Cubic flows", flows);
    cmd.AddValue("rate", "bottleneck rate, e.g. 1Gbps", rate);
    cmd.AddValue("rttMs", "base RTT of every flow in ms", rttMs);
    cmd.AddValue("bufferPackets", "bottleneck FIFO limit in packets", bufferPackets);
    cmd.AddValue("seconds", "simulated seconds", seconds);
    cmd.Parse(argc, argv);

    const uint32_t segmentBytes = 1448;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentBytes));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));

    const DataRate bottleneckRate(rate);
    const DataRate accessRate(bottleneckRate.GetBitRate() * 10);
    const double accessDelayMs = 0.25;
    const double bottleneckDelayMs = rttMs / 2.0 - 2.0 * accessDelayMs;

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(accessRate));
    access.SetChannelAttribute("Delay", TimeValue(MicroSeconds(accessDelayMs * 1000)));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(bottleneckRate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(MicroSeconds(bottleneckDelayMs * 1000)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

    PointToPointDumbbellHelper dumbbell(flows, access, flows, access, bottleneck);
    InternetStackHelper stack;
    dumbbell.InstallStack(stack);

    // The bottleneck's two router devices get the FIFO (before addresses are assigned, which would
    // install the default queue disc).
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                          "MaxSize",
                          StringValue(std::to_string(bufferPackets) + "p"));
    fifo.Install(dumbbell.GetLeft()->GetDevice(0));
    fifo.Install(dumbbell.GetRight()->GetDevice(0));

    dumbbell.AssignIpv4Addresses(Ipv4AddressHelper("10.1.0.0", "255.255.255.0"),
                                 Ipv4AddressHelper("10.2.0.0", "255.255.255.0"),
                                 Ipv4AddressHelper("10.3.0.0", "255.255.255.0"));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 5000;
    ApplicationContainer sinks;
    ApplicationContainer sources;
    for (uint32_t i = 0; i < flows; ++i)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        sinks.Add(sink.Install(dumbbell.GetRight(i)));
        BulkSendHelper source("ns3::TcpSocketFactory",
                              InetSocketAddress(dumbbell.GetRightIpv4Address(i), port));
        source.SetAttribute("MaxBytes", UintegerValue(0));
        source.SetAttribute("SendSize", UintegerValue(segmentBytes));
        sources.Add(source.Install(dumbbell.GetLeft(i)));
    }
    sinks.Start(Seconds(0.0));
    sources.Start(Seconds(0.0));
    Simulator::Stop(Seconds(seconds));

    const auto start = std::chrono::steady_clock::now();
    Simulator::Run();
    const auto end = std::chrono::steady_clock::now();

    uint64_t received = 0;
    for (uint32_t i = 0; i < sinks.GetN(); ++i)
    {
        received += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
    }
    const double wall = std::chrono::duration<double>(end - start).count();
    std::cout << "wall_seconds=" << wall << " events=" << Simulator::GetEventCount()
              << " received_bytes=" << received << " sim_seconds=" << seconds << std::endl;
    Simulator::Destroy();
    return 0;
}
