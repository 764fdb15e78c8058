// search::vela_schedule against Vela 2.1's compiles of the real models (docs/design/vela-schedule.md
// "How close it is"): for every record of test/data/vela_tflite_reference.json, our Vela schedule's
// total cycles (NPU passes, our cycle model) against Vela's NPU passes' cycles, and its peak SRAM
// against the record's printed "SRAM used"; and pass by pass, block configs, cycles and cascades. The
// counts are pinned, so a change that moves any record across a bound fails here (raise them as the
// schedule gets closer); the table is printed, and NPUMAP_VELA_PASS_DUMP=1 also lists every pass
// whose block config or cycles differ from Vela's and every layer of ours in a cascade.
//
// Exact means within Vela's printing: cycles within 0.5 of the record's integer, SRAM within 0.05 KiB
// of its one-decimal KiB. Vela's cycles are those of its NPU passes (velas_npu_pass_cycles).
//
// Where it stands: 36 of 36 records exact in cycles, 36 of 36 in SRAM used; all 3,498 passes
// with Vela's block config and its cycles; Vela's 280 cascaded passes, pass for pass. Not pinned
// and not traced: yolo-fastest u55-128's Vela point reads 8 off-chip bytes fewer than Vela's record
// (353,419 against 353,427.4; see the concatenation item below).
// The history of each cause, with the numbers it moved:
//   * FC outputs in NHCWB16 (basic_lstm u55-256 was 292 cycles under): Vela stores an unbatched fully
//     connected layer's [1,1,1,N] output NHCWB16 where its readers allow it, which our lowering
//     never offered; its 49 lstm_cell/add passes cost 354 cycles in ours, bound by the NPU, against
//     Vela's 358/360, bound by SRAM access. The lowering now offers the layout (fc_writes_nhcwb16):
//     the record is exact (4,104,698) and every pass has Vela's cycles. It had been tried and reverted
//     once because the default search's join on basic_lstm then ran away (the 49 input projections'
//     outputs, live from the start to their cell, each doubled the join's keys: over 90 s and 21 GB);
//     the join problem now drops a layout that never pays (layout_dominance.hpp: linear is no worse
//     at every layer of the map and the elementwise outputs written over it), so the default front is
//     unchanged and basic_lstm's join is as fast as before;
//   * a concatenation's writer cascaded with its reader (fixed): on yolo-fastest u55-128 Vela
//     cascades concatenate_1's first average pool (concat0_avgpool, channels 0-95, reading the
//     resize's 12x12x96) with depthwise_conv2d_26, the concatenation's only reader, and runs the
//     other writer (concat1_avgpool, channels 96-119) as a cascaded pass of its own just before.
//     Its avoid_for_cascading refuses a concatenation's writer only where the arch spills, and its
//     search_ifm_streaming_partial offers every writer whose only output is the IFM and whose only
//     successor is the reader; its dynamic program counts a rolling buffer for the pair (9 rows of
//     12 x 128 channels at the depthwise's 4x12x16x16: IFM block 8 rows plus the pool's block
//     height 1, 13,824 bytes; 12 rows, 18,432, at 12x4x16x16, which is why Vela's config is 4x12).
//     But the tensor ends up whole: apply_result's rewrite makes it a RollingBufferY, then its
//     NHCWB16 pass over the cascaded passes' outputs reaches it as concat1_avgpool's output and
//     set_format recomputes the storage shape from the whole shape (12x12x128, 18,432 bytes). The
//     record shows it: both passes' sram_used_bytes (39,168 at concat1_avgpool, 58,672 at the
//     cascade) hold the whole 18,432 (58,672 = resize 13,824 + concatenation 18,432 + depthwise OFM
//     18,432 + weights 3,328 + bias 1,200 + 3,456; 39,168 = concat1's IFM 3,456 + 18,432 + 13,824 +
//     3,456: a 3,456-byte tensor live at both, which one not traced; our replay of Vela's allocation,
//     vela_sram.hpp, gives both figures exactly, the concatenation one 18,432-byte range from
//     concat1_avgpool to the cascade), and the pair's cycles are those apart (8,714.5 and 32,776).
//     Our mapspace
//     never rolled a tensor with several writers (may_roll), so the pair was missing (278 of 280)
//     and the depthwise at 12x4x16x16 (same cycles). Now add_vela_cascades offers such a cascade as
//     Vela does (not where the arch spills; the writers right before the reader, any of them
//     IFM-streamed with the reader, the others finished apart before it) with Vela's rolling-buffer
//     figure in its accounting, and the point keeps the tensor whole, so it costs the same as apart
//     (VelaBaseline::whole_cascades; Vela's problem keeps the reader's rows apart per IFM block
//     height, as for a rolling IFM). Of the two writers our dynamic program keeps concat0 with the
//     reader, as Vela's: yolo-fastest u55-128 cascades Vela's 8 passes at Vela's configs, cycles and
//     SRAM unchanged (exact before and after), no other record moves;
//   * Vela's pass order in the SRAM replay: with the FC outputs NHCWB16 (first item) both U55
//     basic_lstm SRAM figures had moved from 24,608 to 24,512 bytes against Vela's 24,624, and main's
//     24,608 was within Vela's printing only by a compensating difference. Traced: Vela's
//     per-cascaded-pass sram_used_bytes equalled ours on 619 of main_split_3's 669 NPU passes, the
//     other 50 (the input projections) each 112 bytes under: Vela runs Shape, strided_slice,
//     zeros/packed, zeros and MatMul_11 before transpose and the projections, holding MatMul_11's
//     output (480) and zeros (128) through them where ours held the average pool's output (496).
//     Vela's pass packing walks the inputs first first (its code), which puts them there; the
//     projections come first inside the NPU subgraph because its scheduler then re-orders each NPU
//     subgraph's cascaded passes (depth first from the passes without successors, predecessors
//     first). vela_pass_order now does both (it had walked last first, which imitated the
//     re-ordering inside a subgraph but not where the subgraphs fall): basic_lstm 24,624 bytes on
//     both U55 records (24,608 before, both print 24.05) and 24,128 on u65-256, Vela's, with or
//     without the FC change; the other 33 records stay exact in SRAM;
//   * the choice where the arena is SRAM (U55): add_vela_cascades runs Vela's dynamic program (its
//     candidates per pass in three values, cut to 16 by candidate metric) per NPU subgraph over our
//     layers in step order, where Vela's covers each pass's ancestors, with its pass metric (from our
//     cycle model) and its SRAM accounting (every feature map whole and NHWC, rolling buffers NHCWB16, the OFM
//     written over the IFM of IFM-streamed passes, each pass's candidates filtered before the
//     tensors around it count, the tensors live around a pass counted over Vela's live ranges with
//     its elementwise merge: vela_scheduling_live) and Vela's order breaking only exact ties of all
//     three values. Vela cascades 40 passes over the U55 records, ours 38, all of them Vela's: the
//     same passes on ssd_slim (exact in cascades on both), kws_micronet_m, person_detect (none),
//     yolo-fastest u55-256 and vww2; on yolo-fastest u55-128 Vela's first three pairs, not its late
//     one (concatenate_1's first average pool and depthwise_conv2d_26 after it): their tensor, the
//     concatenation, has two writers, which our mapspace never rolls (may_roll), while Vela's
//     avoid_for_cascading refuses a concatenation's writer only where the arch spills, so on U55 it
//     cascades the first writer with the reader (the second writes into the same tensor alone; since
//     offered, the first item of this history, and ours cascades Vela's 40). The record was exact
//     in cycles and SRAM anyway: the pair costs the same cycles cascaded, and the depthwise's one
//     other block config, Vela's 4x12x16x16 against our 12x4x16x16 (32,776 cycles both), followed
//     from the cascade (4-row blocks need a smaller rolling buffer). vww2 u55-128 had joined
//     the 1x1 convolution PartitionedCall_12 to the cascade after it, which Vela streams alone at
//     5x2x8x8 (see "NHWC while scheduling" below; -0.6% -> exact). cascade_u55 costs each row as Vela's
//     scheduler does: the int32 bias read in place, the weights as encoded before scheduling (block
//     depth 16, streams of 16), their SRAM from that encoding (scheduling_weight_sram: whole, or a
//     double buffer of min(C, 2 x block depth) channels at its worst-stream ratio) and no bias copy;
//     of equal metrics the weight-streamed row first (Vela lists those candidates first and keeps
//     the first of equal ones). The bias had been costed as placed (copied for IFM streaming)
//     because in place put person_detect u55-256 at +7.5%; the compensating error was the double
//     buffers' size: its 128-channel pointwise convolutions (Conv2d_8..10) wait on their weights
//     from flash whatever the config, so all configs and both strategies tie in metric, and Vela
//     keeps its first, the double buffer at 6x6x32x112, the same size in its figure as at 96 (both
//     hold all 128 channels); fresh_groups, comparing the real encodings' buffers, dropped the 112
//     one, and the IFM-streamed row at 112 (17,232 cycles against 10,405) won the tie on config
//     order. Fixed: person_detect u55-256 +1.6% -> +0.0%, kws_ref_model u55-256 -3.2% -> exact (its
//     conv2d_4 now double-buffered as Vela's), cnn_s u55-256 -4.7% -> -2.3% and SRAM exact; 13 more
//     passes with Vela's block config. yolo-fastest u55-128 cascades Vela's 8 passes only if the
//     IFM-streamed row wins ties (without the weight-streamed-first order), which costs blocks
//     elsewhere; in our figures those cascades tie the non-cascaded choice in metric and peak. Both
//     were one cause: Vela's order (weight-streamed first, then config order) breaks only exact ties
//     of metric, finished SRAM and open SRAM (its stable filter keeps the first of equal ones); it
//     had been a millionth of metric per place, so an earlier config beat a cascade of equal metric
//     and less SRAM. As a tie-break only: yolo-fastest cascades 2 -> 6 passes on both U55 records
//     (Vela 8 and 6), vww2 u55-256 2 -> 4 (Vela's 4), 13 more passes with Vela's cycles. The
//     records' per-cascaded-pass sram_used_bytes are not the figures Vela's dynamic program
//     compared: tensor_allocation.py's mark_sram_used_for_cascaded_passes overwrites every cascaded
//     pass's figure after the SRAM allocation with the sum of the live ranges' sizes at its time
//     slots (final formats: NHCWB16 between NPU passes, rolling buffers, weight buffers, bias
//     copies), so their largest is the printed "SRAM used" on 25 of the 36 records (above it on the
//     rest: a range fused for several tensors, an elementwise OFM over its IFM or a reshape's input
//     and output, counts once per tensor there). The search itself sizes every feature map NHWC
//     (mark_tensors.py gives feature maps the arch's default_feature_map_format, NHWC;
//     scheduler.py's DynamicProgrammingScheduler.apply_result sets NHCWB16 only after the
//     search, within its cascades and between NPU cascaded passes) and rolling buffers NHCWB16
//     (tensor.py storage_size_for_sub_purpose), as ours does. vww2 u55-128 was at -8.0%: Vela
//     cascades the 1x1 convolution to 128 channels and the stride-2 depthwise after it (the
//     depthwise at 1x4x16x16, 21,593 cycles against 5,611 alone), which our dynamic program priced
//     at 28,264 bytes against 28,320 apart, 56 bytes (56,000 of candidate metric) for 659,136 more
//     pass metric. The cause was the live ranges around a pass (scheduler.py
//     calc_non_local_mem_usage): Vela adds every tensor's size over the range it maps to, and its
//     merge gives the residual add before the convolution its first operand's range, so that operand
//     (4,064 bytes) counts at the convolution too: the convolution apart becomes 30,336, the
//     subgraph's peak, and the cascade, counted at the depthwise, saves 2,072 bytes (worked in
//     test/search/vela_schedule_test.cpp SharedLiveRangeByHand). With it vww2 u55-128 is at -1.1%
//     with Vela's SRAM used exactly (its 34.98 KiB is that cascade after allocation: IFM 13x13x24 at
//     NHCWB16 5,408, the rolling buffer 16,640, OFM 6,272, weights 3,584 and 1,360, two bias copies
//     of 1,280), vww2 u55-256's SRAM is exact (28.19 -> 27.66 KiB) and its cycles -1.9% -> -0.8%,
//     ssd_slim u55-128 (-0.5%) and pretrainedResnet u55-256 (+0.0%, 32 cycles over) exact.
//     Not a cause: Vela's
//     metric reads an IFM-streamed pass's weights from its SRAM copy once per OFM block, as ours
//     does (its insert_dma clones the weights into SRAM before scheduling);
//   * the first pass of an NPU subgraph and the bias copies (fixed): Vela times a pass's DMAs (its
//     weights' and bias copy's reads from permanent storage) into its NPU cycles when it has no NPU
//     predecessor (npu_performance.py), and that is looked up among the passes of its own NPU
//     subgraph: extract_npu_subgraphs.py gives a subgraph's inputs a start-up producer of their
//     own, so a pass behind a CPU layer has none. Ours had counted any producer, so cnn_s's first
//     convolution (behind the CPU's input quantize) lacked its 2,000 cycles of DMA (weights and bias
//     at one byte per cycle from flash: 28,596 against 26,596 on u55-128). And the bias copy's size is
//     Vela's packed bias/scale tensor (weight_compressor.py): 10 bytes per channel in one stream,
//     padded to 16, the padding counted as ceil(padding / 10) more 10-byte elements, then rounded up
//     to 16 (workloads::packed_bias_scale_size); ours was 10 bytes per channel rounded up to 16, 16 bytes
//     short where the channels are not a multiple of 8 (kws_micronet_m's first convolution: 16
//     cycles of its DMA, 0.03 KiB of SRAM). Both: cnn_s u55-128 -2.0% and u55-256 -2.3% -> exact,
//     kws_micronet_m on both U55 configs exact in cycles (16 under before), kws_micronet_m u65-256's
//     SRAM exact (386,000 -> 386,144 bytes, Vela's: the 144 bytes were its first cascaded pass's bias
//     copies, 16 bytes short each, not the members' block depths once suspected); cnn_s u65-256 +0.4% -> +1.0% (its first convolution now has
//     Vela's 13,030 cycles, which had hidden the elementwise passes' +300; see below);
//   * layers shared by the stage (fixed): the per-layer stage computes one of several identical layers
//     and gives the others its rows (same_stage_input), and it had not compared the weights' encoded
//     sizes per variant, so person_detect's depthwise convolutions 8, 10 and 11 (6x6x128, weights
//     encoding to other sizes than Conv2d_7's) had Conv2d_7's rows and cycles (4,208 against Vela's
//     4,160, 4,224 and 4,192 on u55-128). Compared: person_detect exact on both U55 configs (48 and
//     64 cycles over before), vww2 u55-128 -1.1% -> -0.6% and u55-256 -0.7% -> -0.1% (depthwise
//     convolutions 55, 85 and 107 with their own encodings: 2 and 3 more passes with Vela's block
//     config), yolo-fastest u55-128 80 cycles closer (still -0.1%);
//   * NHWC while scheduling (fixed): Vela's scheduler costs every feature map in NHWC (mark_tensors.py;
//     apply_result sets NHCWB16 after the search), so a pass's metric counts its tensors' own bytes,
//     not NHCWB16's rounded to 16 channels (the transfer efficiency of a tensor that need not be
//     linear is costed as NHCWB16 either way). Ours had costed the final layouts. vww2 u55-128's
//     PartitionedCall_12 (1x1, 25x25x4 -> 25x25x8, IFM-streamed): with NHCWB16 its IFM and OFM
//     read and write 10,000 bytes each, its SRAM access cycles (above 2,500) rise over its NPU
//     cycles at some configs and its least metric was 1x14x8x8 (141,504), with 5x2x8x8 above
//     145,000; in NHWC (2,500 and 5,000 bytes) 5x2x8x8 is the least (119,154 against 126,414), Vela's
//     config, and the convolution streams alone as Vela's (vela_scheduling_pass,
//     VelaSchedule.SchedulingPassHasNhwcFeatureMaps). With it vww2 exact on both U55 configs (-0.6%
//     and -0.1% before), 20 more passes with Vela's block config (18 on U55: vww2 u55-128's 4 and
//     u55-256's 2, yolo-fastest u55-256's 10, kws_micronet_m u55-256's and person_detect u55-256's
//     one each; 2 on vww2 u65-256), yolo-fastest u55-256 -0.3% -> +0.1% (its 3 remaining
//     passes with another config, below), vww2 u65-256 82,140 -> 82,082 cycles (-1.0% either way);
//   * NPU subgraphs in Vela's pass order (fixed): Vela cuts its pass order (pass_packing.py's walk
//     back from the outputs, each pass visiting its inputs in the graph's operand order) into NPU
//     subgraphs at its CPU passes; ours had used our step order for the NPU predecessor above.
//     yolo-fastest's depthwise_conv2d_24 reads conv2d_49's output, which the CPU's
//     ResizeNearestNeighbor also reads, and in Vela's order the resize comes between them: the
//     depthwise starts a subgraph and pays its weights' DMA (2,720 bytes from flash, 6,253 -> 8,973
//     cycles on u55-128, Vela's). workloads::vela_npu_subgraphs (the workload's npu_subgraph) gives
//     each layer its subgraph; yolo-fastest u55-128 -0.1% -> exact (the 2,720 cycles were its whole
//     difference), u55-256 +0.1% -> +0.2% (the depthwise now at Vela's 6x6x16x16 and 5,958 cycles,
//     which had hidden the two below), yolo-fastest u65-256 1,018,882 -> 1,019,190 cycles;
//   * feature maps passed between NPU subgraphs (fixed): such a tensor, every reader on the NPU, is
//     NHWC in Vela (the subgraph's output) but costed as NHCWB16 (its needs_linear_format cleared by
//     the graph optimiser). Ours gave it NHCWB16 (lowering.cpp crosses_npu_subgraphs: now linear with
//     needs_linear_format false). yolo-fastest's add_12, read by conv2d_37 and, behind the resize, by a
//     concatenation: conv2d_37 8,702 -> 7,406 cycles on u55-256 (Vela's); u55-256 +0.2% -> +0.1%;
//     vww2 u65-256 82,082 -> 82,026 cycles and SRAM 69.08 -> 67.77 KiB (Vela 63.80);
//   * concatenations along C (fixed): Vela keeps a concatenation NHCWB16 when every part starts at a
//     multiple of 16 channels (avoid_nhcwb16_for_concat), ours when every part's size was one: so
//     yolo-fastest's concatenate_1 (96 then 24 channels, starting at 0 and 96) was linear, and its
//     average pools wrote 12x12x120 linear (17,280 bytes at half the burst: 34,560) where Vela
//     writes NHCWB16 (18,432), 6,048 -> 4,408 cycles at Vela's 2x2x120x120 (the writers are taken
//     as the parts in order). yolo-fastest u55-256 +0.1% -> exact, u65-256 +1.1% -> -0.2%;
//   * basic_lstm u55-256 (292 cycles under): its 49 lstm_cell/add passes, each adding two
//     fully-connected outputs (1x472), are 354 cycles in ours against Vela's 358 and 360: Vela stores
//     the FCs' outputs and the adds' NHCWB16 (the records), ours linear (our lowering never gives a
//     fully-connected layer's output NHCWB16), so Vela's SRAM access (960 + 480 bytes at half the
//     burst with a block 1 wide: 360 cycles) binds where our NPU cycles (354) do. Tried: an
//     unbatched FC writing its [1,1,1,N] OFM may use NHCWB16 (in nhcwb16_eligible and in the FC's
//     own output_linear_only; the latter alone left the FC linear and its readers NHCWB16, so no
//     join in Vela's layouts, and the schedule fell back to all-linear: exact passes 3,287 -> 2,759).
//     With both, basic_lstm u55-256 is exact in cycles (49 more exact passes), but on both U55
//     records Vela's SRAM figure drops from 24.03 to 23.94 KiB against Vela's 24.05 (the adds now
//     merge their outputs into an FC output's range, as Vela's do, same layout; the 112 bytes left
//     not traced): cycles exact 25 -> 26, SRAM exact 32 -> 30, so not committed (made since, with
//     Vela's pass order in the SRAM replay and layouts that never pay: the first item);
//   * kws_ref_model on u55-256: exact (see above); its three IFM-streamed pointwise convolutions
//     (1x1, 64 to 64 channels, blocks 18x6x32x32, weights whole in SRAM, 4,112 bytes) need the
//     bias copy left out of the pass's figure (Vela's scheduler counts none; it moves biases to SRAM
//     after scheduling): IFM 8,000 + OFM 8,000 + weights 4,112 less the OFM-over-IFM overlap 2,240
//     = 17,872, under the 18,080 of the double buffer (20x6x32x16);
//   * cascades where the arch spills (U65): add_vela_cascades runs Vela's dynamic program there too
//     (it had been the join's least metric alone, break_rolling_ties on its ties), with Vela's
//     figures for a spilling arch: no feature map counts (its scheduler adds only tensors in SRAM,
//     and before scheduling those are the weights' copies), each member's weights and each rolling
//     buffer do, no OFM-over-IFM overlap, SRAM weight 0, and the SRAM limit (384 KiB on
//     ethos-u65-256) still drops candidates (VelaSchedule.SpillingFiguresHoldNoFeatureMap). The limit
//     binds on ssd_slim: without it our program takes the join's schedule back (383.16 KiB); with it
//     ssd_slim u65-256's SRAM used is Vela's (383.16 -> 375.66 KiB, exact; cycles +0.4% -> +0.6%)
//     and 2 more of its passes have Vela's block config. The pass metric of a cascade member reads
//     its rolled IFM from the arena, bytes (DRAM's bandwidth weight, 10), access cycles and latency
//     alike: Vela costs an IFM-streamed pass with an empty rewrite list (search_ifm_streaming_body;
//     the rolling buffer's rewrite joins the candidate afterwards, and its metrics are not
//     recomputed), so the IFM is still the arena's tensor there. We had read its bytes from SRAM:
//     person_detect's Conv2d_6_pointwise (6x6x64 -> 128 channels) then cost 234,454 at 6x6x32x32 and
//     239,936 at Vela's 6x6x32x64, the IFM read 4 times against 2 at weight 1 instead of 10. With the
//     IFM in the arena 30 more U65 passes have Vela's block config (33 differing -> 3): ssd_slim
//     73 -> 81 of 81 (cycles +0.6% -> +1.0%: the rest is operand residences, below), yolo-fastest
//     97 -> 110 of 111 (+1.1% -> +1.3%), kws_micronet_m 10 -> 13 of 13 (-2.4% -> -0.0%, one cycle
//     under), person_detect 57 -> 60 of 60 (+0.8% -> +0.3%, SRAM used 383.62 -> 378.14 KiB, Vela's:
//     its first cascade now ends where Vela's does, at Conv2d_12_depthwise), pretrainedResnet 43 -> 44
//     (-0.4% -> +0.3%), vww2 61 -> 63 (-1.0%). Ours cascade Vela's 240 passes, pass for pass. The
//     last 4 were yolo-fastest's: Vela cascades three (max pool, copy into the concatenation) pairs
//     (max_pooling2d_2 and concat0_avgpool, max_pooling2d_1 and concat1_avgpool, max_pooling2d and
//     concat2_avgpool); our mapspace rolls a tensor only into the layer right after its producer in
//     step order (lowering.cpp may_roll), and the importer wrote the layers in TFLite operator order,
//     the three max pools first, so only the first pair had a rolling row (85 cascaded against 89).
//     The importer now takes a pass whose only reader reads nothing else right before that reader
//     where no input then lives longer, as Vela's pass order has it (import.cpp node_order, chain_heads; TfliteImport.ALinkedProducer-
//     ComesRightBeforeItsReaderAsInVelasPassOrder): 89 of 89, the record's cycles unchanged
//     (1,008,398);
//   * block configs: one pass of 3,498 differs, yolo-fastest u55-128's depthwise_conv2d_26 (Vela
//     4x12x16x16, ours 12x4x16x16, 32,776 cycles both), which follows from the cascade ours does not
//     make there (above). History: on U55, when 51 differed
//     (before the bias copy left the cascade choice's SRAM; not recounted since), 14 were IFM-streamed
//     passes of Vela's (6 in its cascades), 5 of which ours double-buffered and 2 read in place; 7
//     weight-streamed passes of Vela's that ours IFM-streamed; 30 weight-streamed by both, with
//     another double buffer (its size follows the OFM block depth): the candidate sets
//     (Vela's cover each pass's ancestors, ours every layer before it), our pass metric against
//     Vela's and the SRAM figures are not yet told apart. On U65 none: the last two,
//     vww2's PartitionedCall_71 and _82 1x1 convolutions (24 -> 112 channels on 4x4; Vela 4x4x24x16,
//     ours 4x4x24x112), were costed with their IFM in NHCWB16 (4x4x32 bytes, read 7 times at OFM
//     depth 16): 180,002 of pass metric at 16 against 173,152 at 112. Vela's scheduler sees every
//     feature map NHWC (mark_tensors.py; apply_result sets NHCWB16 after the search), 4x4x24 bytes,
//     its transfer efficiency still estimated as NHCWB16: 171,042 against 171,872, Vela's 16. Costed
//     so where the arch spills (scheduling_pass), vww2 u65-256 has every block config Vela's (63 -> 65
//     of 65, cycles -1.0% -> -1.1%). Vela does the same on U55, and so does ours now (vela_scheduling_pass:
//     "NHWC while scheduling" above; vww2 on both U55 configs exact). yolo-fastest's
//     concatenate_1 (96 + 24 channels, parts at offsets 0 and 96) is NHCWB16 in Vela (its rule:
//     every part starts at a multiple of 16, graph_optimiser.py avoid_nhcwb16_for_concat) and was
//     linear in our mapspace (our rule asked every part's C, the last one's 24 too, to be a multiple
//     of 16): its two slice copies then had other block configs on u55-256 (4x2x64x64 against
//     Vela's 2x2x120x120) and u65-256 (concat0, 2x2x120x120 against 12x8x32x32: an NHWC write of
//     the whole tensor in DRAM bursts of 16 bytes; Vela's efficiency estimate treats a tensor that
//     need not be linear as NHCWB16, bursts of 16 x block width). With Vela's rule (lowering.cpp
//     nhcwb16_eligible; Mapspace.AConcatenationIsNhcwb16WhenEveryPartStartsAtAMultipleOf16)
//     yolo-fastest u65-256 is at +0.0% (316 cycles over; was +1.3%) with every block config
//     Vela's, and u55-256 has both copies' block config and cycles (-0.3% -> -0.4%);
//   * elementwise passes with Vela's block config but other cycles: the residence or layout of an
//     operand differs (on U65 which feature maps the SRAM fill moved); so did 21 U65 cascade members
//     with Vela's block config and other cycles (ssd_slim 8, vww2 8, yolo-fastest 3, cnn_s 1,
//     kws_micronet_m 1) before the feature maps between NPU subgraphs were linear (lowering.cpp
//     crosses_npu_subgraphs). Traced: on vww2 the outputs of PartitionedCall_20 and of the add
//     PartitionedCall_80 are read again after a CPU Pad, in the next NPU subgraph, so Vela keeps them
//     NHWC (now ours too) and in DRAM (never offered to its fill), where fill_sram still moves them
//     to SRAM: PartitionedCall_22 1,810 cycles against Vela's 1,940,
//     PartitionedCall_82 868 against 1,416; on ssd_slim Vela's fill moves model/concatenate/concat
//     (written by four copies) to SRAM, which fill_sram never offers (a tensor of several writers):
//     its copies cost 1,580 cycles against Vela's 604. The fill now moves a concatenation's output
//     (Vela lists it as an output of each pass writing a slice): ssd_slim u65-256's four average
//     pools 1,580 -> 604 cycles (Vela's), its max pool 11,925 -> 4,472 (Vela's), the sub after it
//     7,514 -> 7,328; measured before h38k's U65 cascades were merged: ssd_slim u65-256 +0.4% ->
//     -1.5% (passes already below Vela's no longer hidden), yolo-fastest u65-256 +1.1% -> -0.2%,
//     3,252 -> 3,265 passes with Vela's cycles. The vww2 layout rule is not changed here (it would
//     also move U55 records);
//   * SRAM: ours is Vela's allocator's figure for our schedule (vela_sram.hpp: Vela's pass order, its
//     live ranges, 16-byte sizes, its hill climb), exact on 34 of the 36 records (every U55 one), where the tensors
//     our schedule puts in SRAM are Vela's. Its elementwise merge reads the operands in Vela's graph
//     order: Vela tests its first operand's memory for both, so a pass whose graph has a constant
//     first merges nothing (ssd_slim's softmax: 43 - clz, F0_one + x, F2_one - x, whose operands the
//     importer writes swapped; merged, our peak there held one 71,552-byte tensor fewer, 384.6 KiB
//     against Vela's 454.5 on both U55 records; now exact). The rest follow the schedule, traced
//     against the records' per-pass tensors (vww2 on U55 was 27.7 against 35.0 KiB and 28.2 against
//     27.7 before the cascades above). Where the arch spills: on ssd_slim, person_detect, kws_micronet_m and
//     vww2 (u65-256) both peaks are in the first cascaded pass (its weights, bias copies and rolling
//     buffers, and the feature maps the fill moved that are live there), whose contents follow the
//     block configs inside Vela's cascades (above); ssd_slim's and person_detect's are now Vela's (384,672 bytes; ours was
//     392,352 with rolling buffers taller by 7,680, basenet.0.0 Vela 10x10 ours 6x20, basenet.1.0 6x28
//     against 10x16, before the cascades above); kws_micronet_m 386,144 against 386,000 (two members with another OFM block depth,
//     whose weights then encode to other sizes, before the IFM in the arena above; now every block
//     config is Vela's and the 144 bytes are the bias copies: Vela's packed bias tensor has one
//     storage element more than channels where those are not a multiple of 8, 141 x 10 = 1,410 ->
//     1,424 bytes for 140 channels where ours was 1,400 -> 1,408, 197 x 10 -> 1,984 for 196 where ours
//     was 1,968: 16 bytes on each of the cascade's eight 140-channel biases and its 196-channel one;
//     exact with the packed bias size, workloads::packed_bias_scale_size);
//     vww2 65,328 against 69,392 (now exact, below), its first cascade (PartitionedCall_3 to _20, every block config
//     Vela's): Vela's 65,328 is its six rolling buffers 62,208 (7,200 + 9,600 + 10,000 + 10,000 +
//     20,000 + 5,408), weights 1,920 and bias copies 1,200 (storage 13, 5, 5, 8, 29, 29, 24 elements
//     of 10 bytes, each rounded to 16; ours the same since the packed bias size); ours also holds
//     PartitionedCall_20's output (13x13x24, linear between NPU subgraphs: 4,056 -> 4,064 bytes)
//     moved to SRAM by fill_sram: 65,328 + 4,064 = 69,392. Vela leaves that tensor in DRAM because the residual add after
//     the CPU Pad, in the next NPU subgraph, reads it: extract_npu_subgraphs makes it an output of
//     its subgraph, whose consumer list then holds None, and apply_result offers no such tensor to
//     use_fast_storage_for_feature_maps. fill_sram now offers only a tensor every reader of which
//     is in its writer's NPU subgraph (VelaSchedule.FillLeavesASubgraphsOutputInTheArena): vww2
//     u65-256 exact in SRAM and cycles (-1.2% -> exact), and so are basic_lstm u65-256's SRAM (23.91
//     -> 23.56 KiB, its 360 bytes were such tensors) and yolo-fastest u65-256's cycles (-258 ->
//     exact: the two passes below); person_detect's first cascade had ended a pass later than Vela's (Vela's: 24 passes,
//     to Conv2d_12_depthwise, 387,216 bytes: weights 106,032, bias copies 19,680, rolling buffers
//     and its output moved to SRAM 261,504, with taller blocks such as Conv2d_1_depthwise 24x16
//     where ours was 8x48; ours 392,832 with rolling buffers of 221,568, its output's 2,304 and
//     Conv2d_12_pointwise's 34,032 of weights and bias), now exact with the IFM in the arena above. basic_lstm u65-256 (23.91 KiB against 23.56, 360 bytes
//     over; not traced further): Vela's fill (use_fast_storage_for_feature_maps) moves every
//     candidate there (all fit), among them the input projections (480 bytes each) its pass order
//     keeps live together. 35 of them (and 5 other tensors) are live across more than 16 layers of
//     our step order (kLongLivedSteps), which our mapspace had kept in the arena, so fill_sram found
//     no template to move them (7.50 KiB, +1.0% cycles). Long-lived maps are now offered SRAM too
//     (the join joins a variant with all of them in the arena and one with all of them pinned in
//     SRAM: long_lived.hpp), and the fill moves them: basic_lstm u65-256 exact in cycles (1,066,771
//     -> 1,055,766, all 669 passes with Vela's cycles). The same cause held the intermediates of
//     every softmax (its lowering's passes keep some live across more than 16 steps) in the arena:
//     kws_ref_model u65-256 +0.7% -> exact, micro_speech u65-256 +1.8% -> exact, person_detect
//     +0.8% -> +0.5%, ssd_slim -1.5% -> -0.5%, cnn_s +0.4% -> -0.5% and pretrainedResnet -0.4% ->
//     -0.7% (u65-256; on the last two the softmax passes now have Vela's cycles and the rest of the
//     network is below Vela's); cycles exact 15 -> 18, SRAM within 10% 35 -> 36, passes with Vela's
//     cycles 3,265 -> 3,376 (these measured before h38k's U65 cascades; with them, at their merge:
//     cycles exact 15 -> 21, SRAM within 10% 35 -> 36, passes with Vela's cycles 3,274 -> 3,401, and
//     ssd_slim, pretrainedResnet, person_detect, kws_ref_model, micro_speech and basic_lstm
//     u65-256 exact in cycles; basic_lstm's SRAM is the one U65 record this moves in SRAM). On yolo-fastest u65-256 two passes lost Vela's cycles (conv2d_37 8,197
//     -> 8,068, concat1_avgpool 5,041 -> 4,912): our fill now moves a long-lived map there that
//     Vela's did not: a tensor read in another NPU subgraph, which Vela's fill never offers (above;
//     exact since);
//   * bias: Vela copies the bias of an IFM-streamed pass only where it fits, ours always.

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arch/arch_loader.hpp"
#include "mapper/search/map_network.hpp"
#include "mapper/search/vela_schedule.hpp"
#include "workloads/tflite/import.hpp"
#include "test/support/reference_data.hpp"

namespace npumap::tflite {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// Vela's cycles of the NPU subgraphs: the sum of their cascaded passes' Total cycles. Vela's printed
/// Total adds its estimate of the CPU subgraphs' memory traffic (a CPU pass's feature maps read and
/// written at the memory's bandwidth), which our cycle model leaves out (a CPU operator costs 0 here).
double velas_npu_pass_cycles(const json& rec) {
  double cycles = 0.0;
  for (const json& sg : rec.at("subgraphs"))
    if (sg.at("placement").get<std::string>() != "Cpu")
      for (const json& cps : sg.at("cascaded_passes")) cycles += cps.at("cycles").at("total").get<double>();
  return cycles;
}

/// Pass-by-pass agreement of our Vela schedule with a record's NPU pass records, matched by name (a
/// Vela pass is named after its primary op's output, as our layer is).
struct PassCounts {
  int vela_passes = 0;      ///< Vela's NPU passes
  int matched = 0;          ///< of ours, NPU layers with a Vela pass of the same name
  int same_block = 0;       ///< of the matched, the same block config (H, W, IFM depth, OFM depth)
  int cycles_exact = 0;     ///< of the matched, the pass's Total cycles within 0.5
  int vela_cascaded = 0;    ///< Vela's passes in a cascade of two or more
  int ours_cascaded = 0;    ///< our layers with a rolling-buffer input or output
  PassCounts& operator+=(const PassCounts& o) {
    vela_passes += o.vela_passes, matched += o.matched, same_block += o.same_block, cycles_exact += o.cycles_exact;
    vela_cascaded += o.vela_cascaded, ours_cascaded += o.ours_cascaded;
    return *this;
  }
};

PassCounts compare_passes(const json& rec, const workloads::Workload& w, const search::StageResult& stage,
                          const search::VelaBaseline& v, bool dump) {
  struct VelaPass {
    std::array<int, 4> block{};
    double cycles = 0.0;
  };
  PassCounts n;
  std::map<std::string, VelaPass> vela;
  for (const json& sg : rec.at("subgraphs"))
    for (const json& cps : sg.at("cascaded_passes"))
      for (const json& p : cps.at("pass_records")) {
        if (p.at("placement").get<std::string>() != "Npu") continue;
        ++n.vela_passes;
        n.vela_cascaded += cps.at("passes").size() > 1 ? 1 : 0;
        vela[p.at("name").get<std::string>()] = {p.at("block_config_HWIdOd").get<std::array<int, 4>>(),
                                                 p.at("cycles").at("total").get<double>()};
      }
  for (std::size_t s = 0; s < v.problem.steps.size(); ++s) {
    const search::LayerResult& lr = stage.layers.at(static_cast<std::size_t>(w.topological_order.at(s)));
    if (lr.space.cpu) continue;
    const search::PmappingGroup& g = v.problem.steps[s].groups.at(v.point.group[s]);
    const search::PmappingRow& row = g.rows.at(v.point.row[s]);
    bool rolling = false;
    for (const search::TensorCompat& c : g.compat) rolling = rolling || c.residence == search::Residence::Rolling;
    rolling = rolling || search::in_whole_cascade(v, s);  // a concatenation's writer and reader, the tensor whole
    n.ours_cascaded += rolling ? 1 : 0;
    if (dump && rolling) std::printf("    ours cascaded: %s\n", w.layers.at(static_cast<std::size_t>(lr.space.layer)).name.c_str());
    const auto it = vela.find(w.layers.at(static_cast<std::size_t>(lr.space.layer)).name);
    if (it == vela.end()) continue;
    ++n.matched;
    const model::BlockConfig& bc = lr.space.block_configs.at(row.candidate);
    const bool same_block = std::array<int, 4>{bc.ofm_h, bc.ofm_w, bc.ifm_d, bc.ofm_d} == it->second.block;
    n.same_block += same_block ? 1 : 0;
    n.cycles_exact += std::abs(row.cycles - it->second.cycles) <= 0.5 ? 1 : 0;
    if (dump && (!same_block || std::abs(row.cycles - it->second.cycles) > 0.5)) {
      // Whether Vela's config is among the layer's rows at all, and its least cycles there.
      double vela_rows_cycles = -1.0;
      for (const search::PmappingGroup& og : stage.layers.at(static_cast<std::size_t>(w.topological_order.at(s))).groups)
        for (const search::PmappingRow& r : og.rows) {
          const model::BlockConfig& c = lr.space.block_configs.at(r.candidate);
          if (std::array<int, 4>{c.ofm_h, c.ofm_w, c.ifm_d, c.ofm_d} == it->second.block &&
              (vela_rows_cycles < 0 || r.cycles < vela_rows_cycles))
            vela_rows_cycles = r.cycles;
        }
      const std::array<int, 4>& vb = it->second.block;
      const search::Template& tpl = lr.space.templates.at(row.template_index);
      // The name's last 40 characters (many models' names share long prefixes).
      const std::string tail = it->first.size() > 40 ? it->first.substr(it->first.size() - 40) : it->first;
      std::printf("    %-40.40s %-14s vela %dx%dx%dx%d %8.0f ours %dx%dx%dx%d %8.0f tpl %u %s/%s/%s; vela's config in rows: %8.0f "
                  "(%zu configs)\n",
                  tail.c_str(), std::string(model::op_type_name(lr.space.base.op.type)).c_str(), vb[0], vb[1], vb[2], vb[3],
                  it->second.cycles, bc.ofm_h, bc.ofm_w, bc.ifm_d, bc.ofm_d, row.cycles,
                  row.template_index, std::string(model::traversal_name(tpl.traversal)).c_str(),
                  search::weight_placement_name(tpl.weights), search::bias_placement_name(tpl.bias), vela_rows_cycles,
                  lr.space.block_configs.size());
    }
  }
  return n;
}

TEST(VelaScheduleAgainstVela, PinnedCountsOnEveryRecord) {
  std::ifstream in(npumap::testing::kVelaReference);
  ASSERT_TRUE(in.good()) << npumap::testing::kVelaReference;
  const json ref = json::parse(in);
  int records = 0, cycles_exact = 0, cycles_within_5 = 0, cycles_within_15 = 0, sram_exact = 0, sram_within_10 = 0;
  double worst_low = 0.0, worst_high = 0.0;
  PassCounts passes;
  for (const json& rec : ref.at("records")) {
    const std::string model = rec.at("model").get<std::string>(), config = rec.at("config").get<std::string>();
    const fs::path path = npumap::testing::kModelsDir / (model + ".tflite");
    ASSERT_TRUE(fs::exists(path)) << path;
    const arch::Arch a = arch::load_arch(config);
    ImportOptions import;
    import.accelerator_config = a.accel.name;
    const workloads::Workload w = load_network(path.string(), import);
    const auto t0 = std::chrono::steady_clock::now();
    const search::StageResult stage = search::run_per_layer(a, w, search::StageOptions{});
    const auto t1 = std::chrono::steady_clock::now();
    const auto v = search::vela_schedule(a, w, stage);
    const auto t2 = std::chrono::steady_clock::now();
    const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    ASSERT_TRUE(v.has_value()) << model << " on " << config;
    ++records;
    const double vela_cycles = velas_npu_pass_cycles(rec);
    const double vela_sram_kib = rec.at("printed_SRAM_used_KiB").get<double>();
    const double ours_kib = v->sram_used_bytes / 1024.0;
    const double dc = (v->point.cycles - vela_cycles) / vela_cycles;
    worst_low = std::min(worst_low, dc);
    worst_high = std::max(worst_high, dc);
    cycles_exact += std::abs(v->point.cycles - vela_cycles) <= 0.5 ? 1 : 0;
    cycles_within_5 += std::abs(dc) <= 0.05 ? 1 : 0;
    cycles_within_15 += std::abs(dc) <= 0.15 ? 1 : 0;
    sram_exact += std::abs(ours_kib - vela_sram_kib) <= 0.05 ? 1 : 0;
    sram_within_10 += std::abs(ours_kib - vela_sram_kib) <= 0.1 * std::max(vela_sram_kib, 1.0) ? 1 : 0;
    const double live_kib = v->point.peak_sram_bytes / 1024.0;  // our accounting of the same schedule
    std::printf("%-45s %-14s cycles vela %10.0f ours %10.0f %+6.1f%%  SRAM KiB vela %7.2f ours %7.2f (our accounting %7.2f)  "
                "(stage %.0f ms, schedule %.0f ms)\n",
                model.c_str(), config.c_str(), vela_cycles, v->point.cycles, 100.0 * dc, vela_sram_kib, ours_kib, live_kib,
                ms(t1 - t0), ms(t2 - t1));
    const PassCounts n = compare_passes(rec, w, stage, *v, std::getenv("NPUMAP_VELA_PASS_DUMP") != nullptr);
    std::printf("  passes: Vela %d, ours matched by name %d, same block config %d, same cycles %d; cascaded: Vela %d, "
                "ours %d\n",
                n.vela_passes, n.matched, n.same_block, n.cycles_exact, n.vela_cascaded, n.ours_cascaded);
    passes += n;
  }
  std::printf("passes: Vela %d, ours matched by name %d, same block config %d, same cycles %d; cascaded: Vela %d, "
              "ours %d\n",
              passes.vela_passes, passes.matched, passes.same_block, passes.cycles_exact, passes.vela_cascaded,
              passes.ours_cascaded);
  std::printf("records %d: cycles exact %d, within 5%% %d, within 15%% %d (range %+.1f%% .. %+.1f%%); SRAM exact %d, "
              "within 10%% %d\n",
              records, cycles_exact, cycles_within_5, cycles_within_15, 100.0 * worst_low, 100.0 * worst_high, sram_exact,
              sram_within_10);
  EXPECT_EQ(records, npumap::testing::kVelaReferenceRecords);
  // Pinned (see the causes above); raise them as the schedule gets closer to Vela's.
  // Was 13, 35 and 36 (vww2 u55-128 at -8.0%) before the cascade choice counted Vela's shared live
  // ranges (vww2 u55-128 -1.1%, ssd_slim u55-128 and pretrainedResnet u55-256 exact): 15; with the
  // NPU predecessor looked up in the pass's own NPU subgraph and the bias copy at Vela's packed size
  // (cnn_s and kws_micronet_m on both U55 configs exact): 19; with the stage sharing rows only
  // between layers whose weights encode alike (person_detect on both U55 configs exact): 21; with
  // every feature map NHWC in Vela's scheduling metric (vww2 on both U55 configs): 23; with NPU
  // subgraphs in Vela's pass order, feature maps between them linear and concatenations NHCWB16 where
  // their parts start at multiples of 16 (yolo-fastest on both U55 configs): 25; merged with Vela's
  // dynamic program on U65 (a cascade member's IFM read from the arena, NHWC feature maps in the
  // metric) and the packed bias size: kws_micronet_m u65-256 exact, 26; with long-lived feature maps
  // offered SRAM and the fill moving a concatenation (h38f alone: 21): basic_lstm, cnn_s, kws_ref_model,
  // micro_speech, person_detect, pretrainedResnet and ssd_slim on u65-256 exact, 33; the fill leaving
  // a tensor read in another NPU subgraph in the arena (vww2 and yolo-fastest u65-256): 35; an
  // unbatched fully connected layer's output NHCWB16 (basic_lstm u55-256): 36 (every record).
  EXPECT_EQ(cycles_exact, 36);
  EXPECT_EQ(cycles_within_5, 36);
  EXPECT_EQ(cycles_within_15, 36);
  // SRAM: our figure is Vela's allocator's for our schedule (vela_sram.hpp); exact where the
  // schedule's tensors are Vela's. Was 12 and 26 with the live sum in our step order and the exact
  // least cascade choice: Vela's pass order keeps basic_lstm's 48 input projections live together
  // (+5.6 KiB on U55, now within 20 bytes) and moves pretrainedResnet U65's feature maps' ranges; Vela's
  // cascade dynamic program and its groups keeping their IFM-streamed rows (fresh_groups) put Vela's
  // tensors in SRAM on yolo-fastest and person_detect U55 (the dynamic program alone: 22 and 30;
  // with Vela's allocator too: 25 and 32; without the bias copy in the cascade choice's SRAM, which
  // gives kws_ref_model u55-256 Vela's schedule: 26; with Vela's scheduling figures for the weights'
  // SRAM, cnn_s u55-256: 27; Vela's elementwise merge in its graph's operand order, ssd_slim on U55,
  // both records: 29 and 34; Vela's shared live ranges in the cascade choice, vww2 on U55, both
  // records: 31 and 35).
  // Vela's dynamic program on U65 too (its SRAM limit): ssd_slim u65-256, 32; a cascade member's
  // IFM read from the arena in its pass metric: person_detect u65-256, 33; the bias copies at Vela's
  // packed size: kws_micronet_m u65-256, 34; the fill leaving a tensor read in another NPU subgraph
  // in the arena: vww2 and basic_lstm u65-256, 36 (every record).
  EXPECT_EQ(sram_exact, 36);
  // basic_lstm u65-256 within 10% (7.50 -> 23.91 KiB against 23.56) with long-lived maps in SRAM: 36.
  EXPECT_EQ(sram_within_10, 36);
  // Pass by pass (Vela's NPU passes, every one matched to a layer of ours by name): the block config
  // differs where our choice does (see above), the per-pass cycles also where only the weight or bias
  // placement or an operand's residence does; Vela cascades 280 passes (40 on U55, 240 on U65), ours
  // the same 280, pass for pass (see above). Was 3429, 3235 and 263; Vela's
  // shared live ranges: 3434, 3239, 265; its order as an exact tie-break only: 3439, 3252, 275;
  // Vela's dynamic program on U65 too: 3441, 3254, 275; a member's IFM read from the arena in its pass
  // metric: 3471, 3271, 275; Vela's NHCWB16 rule for a concatenation (yolo-fastest): 3474, 3273, 275;
  // feature maps NHWC in the scheduling metric where the arch spills: 3476, 3274, 275. On U55 (its own
  // line of work): the first-pass DMA behind a CPU layer and the packed bias size: 3439, 3261, 275;
  // the stage's shared layers with their own weight encodings: 3441, 3275, 275; NHWC feature maps in
  // the scheduling metric on every arch: 3461, 3287, 274 (vww2 u55-128's PartitionedCall_12 no
  // longer joins the cascade after it); Vela's NPU subgraphs, feature maps between them and its
  // concatenation rule: 3465, 3293, 274. Both lines merged: 3497, 3312, 274. The fill moving a
  // concatenation: 3265 before the merges; long-lived maps in SRAM: 3401 before them; all merged:
  // 3497, 3439, 274; the fill leaving a subgraph's output in the arena: 3497, 3449, 274; the
  // importer's chain links (a pass right before its only reader, as in Vela's pass order):
  // yolo-fastest u65-256's three max-pool pairs cascade, 3497, 3449, 278 (38 on U55, all Vela's,
  // and Vela's 240 on U65, pass for pass); an unbatched fully connected layer's output NHCWB16 (the
  // 49 lstm_cell/add passes of basic_lstm u55-256): 3497, 3498, 278; Vela's cascades through a
  // concatenation where the arena is SRAM (yolo-fastest u55-128's concat0_avgpool with
  // depthwise_conv2d_26, now at Vela's 4x12x16x16): 3498, 3498, 280 (Vela's 280, pass for pass).
  EXPECT_EQ(passes.vela_passes, 3498);
  EXPECT_EQ(passes.matched, 3498);
  EXPECT_EQ(passes.same_block, 3498);
  EXPECT_EQ(passes.cycles_exact, 3498);
  EXPECT_EQ(passes.vela_cascaded, 280);
  EXPECT_EQ(passes.ours_cascaded, 280);
}

// The Vela point every report shows is the schedule checked above, whatever the run's options: the
// mapper's search, `--no-fusion`, `--objectives cycles,sram` and `--baseline-only` reach it through
// stages of their own (map_network's find_vela_schedule), and a stage without rolling buffers on U55
// once gave kws_micronet_m u55-128 no cascades (437,685 cycles where the checked schedule has
// 488,580, Vela's record 488,596). Metamorphic: the same cycles, peak SRAM (ours and Vela's figure) and off-chip bytes on two
// U55 records whose Vela schedule cascades and one U65 record.
TEST(VelaScheduleAgainstVela, EveryReportShowsTheCheckedSchedule) {
  const std::array<std::pair<const char*, const char*>, 3> cases = {{{"mlzoo__kws_micronet_m", "ethos-u55-128"},
                                                                    {"emza__ssd_slim_120x160x1_v1_int8", "ethos-u55-256"},
                                                                    {"mlperftiny__pretrainedResnet_quant", "ethos-u65-256"}}};
  for (const auto& [model, config] : cases) {
    const arch::Arch a = arch::load_arch(config);
    ImportOptions import;
    import.accelerator_config = a.accel.name;
    const workloads::Workload w = load_network((npumap::testing::kModelsDir / (std::string(model) + ".tflite")).string(), import);
    const auto checked = search::vela_schedule(a, w, search::run_per_layer(a, w, search::StageOptions{}));
    ASSERT_TRUE(checked.has_value()) << model << " on " << config;
    std::array<search::SearchOptions, 4> runs{};
    runs[1].fusion = false;
    runs[2].objectives = {search::Objective::Cycles, search::Objective::Sram};
    runs[3].baseline_only = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      runs[i].threads = 2;
      const search::SearchResult r = search::map_network(a, w, runs[i], {});
      ASSERT_TRUE(r.vela.has_value()) << model << " on " << config << ", run " << i;
      EXPECT_EQ(r.vela->point.cycles, checked->point.cycles) << model << " on " << config << ", run " << i;
      EXPECT_EQ(r.vela->point.peak_sram_bytes, checked->point.peak_sram_bytes) << model << " on " << config << ", run " << i;
      EXPECT_EQ(r.vela->sram_used_bytes, checked->sram_used_bytes) << model << " on " << config << ", run " << i;
      EXPECT_EQ(r.vela->point.offchip_bytes, checked->point.offchip_bytes) << model << " on " << config << ", run " << i;
    }
  }
}

}  // namespace
}  // namespace npumap::tflite
