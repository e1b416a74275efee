use super::*;

/// A 4x5 board: my ants at (0,0) and (3,4), an enemy of relative owner 2 at
/// (1,1), food at (0,4), my hill at (3,4) under my ant, an enemy hill of
/// relative owner 1 at (2,2), water at (1,0), never-seen (3,0..2),
/// remembered land at (2,4).
const FRAME: &str = concat!(
    r#"{"turn":3,"max_turns":1000,"you":0,"players":3,"rows":4,"cols":5,"#,
    r#""attack_radius2":5,"gather_radius2":1,"view_radius2":77,"#,
    r#""map":["....." , "%....", "....,", "??..."],"#,
    r#""ants":[[0,0,0],[1,1,2],[3,4,0]],"mine":[[0,0],[3,4]],"food":[[0,4]],"#,
    r#""hills":[[3,4,0],[2,2,1]],"hive":0,"scores":[1,1,1]}"#,
    "\n"
);

fn view() -> AntsView {
    AntsView::decode(FRAME.as_bytes()).unwrap()
}

fn args(params: &[(&str, i64)]) -> InputArgs {
    InputArgs {
        params: params.iter().map(|&(k, v)| (k.to_owned(), v)).collect(),
        ..InputArgs::default()
    }
}

/// The channels set at one square of a `[.., C, H, W]` tensor's block.
fn channels_at(t: &InputTensor, block: usize, r: usize, c: usize) -> Vec<usize> {
    let (ch, h, w) = (t.shape[1], t.shape[2], t.shape[3]);
    (0..ch)
        .filter(|&k| t.data[((block * ch + k) * h + r) * w + c] == 1.0)
        .collect()
}

#[test]
fn the_local_window_is_centred_on_each_ant_in_mine_order_and_wraps() {
    let t = view()
        .input("local_window", &args(&[("radius", 1)]))
        .unwrap();
    assert_eq!(t.shape, vec![2, 8, 3, 3]);
    // Ant 0 at (0,0): the centre is my ant on visible land.
    assert_eq!(channels_at(&t, 0, 1, 1), vec![2, 4]);
    // Up-left wraps to (3,4): my hill with my ant, visible.
    assert_eq!(channels_at(&t, 0, 0, 0), vec![2, 4, 5]);
    // Left wraps to (0,4): food.
    assert_eq!(channels_at(&t, 0, 1, 0), vec![2, 3]);
    // Down-right (1,1): an enemy merged into the one enemy channel.
    assert_eq!(channels_at(&t, 0, 2, 2), vec![2, 6]);
    // Down (1,0): water only.
    assert_eq!(channels_at(&t, 0, 2, 1), vec![1]);
    // Ant 1 at (3,4): down-right wraps on both edges to (0,0).
    assert_eq!(channels_at(&t, 1, 2, 2), vec![2, 4]);
    // Up (2,4) is remembered land: nothing set.
    assert_eq!(channels_at(&t, 1, 0, 1), Vec::<usize>::new());
    // Left (3,3) visible land; and (3,0) to the right, wrapped, never seen.
    assert_eq!(channels_at(&t, 1, 1, 0), vec![2]);
    assert_eq!(channels_at(&t, 1, 1, 2), vec![0]);
}

#[test]
fn a_window_wider_than_the_board_wraps_around_more_than_once() {
    let t = view()
        .input("local_window", &args(&[("radius", 6)]))
        .unwrap();
    assert_eq!(t.shape, vec![2, 8, 13, 13]);
    // Offset (+4, +5) from (0,0) is (0,0) again.
    assert_eq!(channels_at(&t, 0, 6 + 4, 6 + 5), vec![2, 4]);
    assert_eq!(channels_at(&t, 0, 6 - 4, 6 - 5), vec![2, 4]);
}

#[test]
fn enemy_channels_keep_relative_owners_apart() {
    let t = view()
        .input("whole_map", &args(&[("enemy_channels", 3)]))
        .unwrap();
    assert_eq!(t.shape, vec![1, 12, 4, 5]);
    // Owner 2's ant in the second enemy-ant channel, owner 1's hill in the
    // first enemy-hill channel.
    assert_eq!(channels_at(&t, 0, 1, 1), vec![2, 7]);
    assert_eq!(channels_at(&t, 0, 2, 2), vec![2, 9]);
    let merged = view()
        .input("whole_map", &args(&[("enemy_channels", 2)]))
        .unwrap();
    // With two channels, owner 2 lands in the last one.
    assert_eq!(channels_at(&merged, 0, 1, 1), vec![2, 7]);
    assert_eq!(channels_at(&merged, 0, 2, 2), vec![2, 8]);
}

#[test]
fn a_fixed_whole_map_is_padded_with_water_or_cropped() {
    let mut a = args(&[]);
    a.rows = Some(5);
    a.cols = Some(3);
    let t = view().input("whole_map", &a).unwrap();
    assert_eq!(t.shape, vec![1, 8, 5, 3]);
    assert_eq!(channels_at(&t, 0, 4, 0), vec![1]);
    assert_eq!(channels_at(&t, 0, 3, 0), vec![0]);
    assert_eq!(channels_at(&t, 0, 1, 1), vec![2, 6]);
}

#[test]
fn parameters_out_of_bounds_are_adapter_errors() {
    let v = view();
    for bad in [("radius", 13), ("radius", -1), ("enemy_channels", 0)] {
        let err = v.input("local_window", &args(&[bad])).unwrap_err();
        assert!(err.to_string().contains(bad.0), "{err}");
    }
    assert_eq!(
        v.input("sonar", &args(&[])).unwrap_err(),
        AdapterError::UnknownAdapter("sonar".to_owned())
    );
}

#[test]
fn scores_become_orders_with_stay_winning_ties() {
    let v = view();
    let line = v
        .reply(&[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 2.0, -1.0, 0.5])
        .unwrap();
    assert_eq!(line, br#"{"orders":"-E"}"#);
    let line = v
        .reply(&[3.0, 3.0, 3.0, 3.0, 2.0, 0.0, 0.0, 1.0, 1.0, 0.0])
        .unwrap();
    assert_eq!(line, br#"{"orders":"NS"}"#);
    let line = v
        .reply(&[0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        .unwrap();
    assert_eq!(line, br#"{"orders":"W-"}"#);
    assert_eq!(
        v.reply(&[0.0; 5]).unwrap_err(),
        AdapterError::HeadSize { got: 5, want: 10 }
    );
}

#[test]
fn a_handshake_line_before_the_frame_is_skipped() {
    let both = format!("{{\"game\":\"ants\"}}\n{FRAME}");
    let v = AntsView::decode(both.as_bytes()).unwrap();
    assert_eq!(v.head_rows(), 2);
    assert_eq!(v.board(), (4, 5));
}

#[test]
fn a_colony_without_ants_needs_no_rows() {
    let frame = r#"{"rows":1,"cols":2,"map":["?."],"ants":[],"mine":[]}"#;
    let v = AntsView::decode(frame.as_bytes()).unwrap();
    assert_eq!(v.head_rows(), 0);
    assert_eq!(v.reply(&[]).unwrap(), br#"{"orders":""}"#);
    let t = v.input("local_window", &args(&[])).unwrap();
    assert_eq!(t.shape, vec![0, 8, 11, 11]);
}

#[test]
fn malformed_frames_are_refused_without_panicking() {
    for frame in [
        "",
        "not json",
        r#"{"rows":0,"cols":2,"map":[]}"#,
        r#"{"rows":1,"cols":2,"map":["?"]}"#,
        r#"{"rows":1,"cols":2,"map":["?x"]}"#,
        r#"{"rows":2,"cols":2,"map":["??"]}"#,
        r#"{"rows":1,"cols":2,"map":["??"],"mine":[[0,2]]}"#,
        r#"{"rows":1,"cols":2,"map":["??"],"ants":[[0,-1,0]]}"#,
        r#"{"rows":1,"cols":2,"map":["??"],"hills":[[0,0,-1]]}"#,
        r#"{"rows":100000,"cols":100000,"map":[]}"#,
    ] {
        assert!(
            matches!(
                AntsView::decode(frame.as_bytes()),
                Err(AdapterError::Frame(_))
            ),
            "{frame}"
        );
    }
}

#[test]
fn the_interface_declares_what_the_adapters_build() {
    assert_eq!(INTERFACE.adapter_set, "ants/1");
    let v = view();
    for spec in INTERFACE.adapters {
        let t = v.input(spec.name, &args(&[])).unwrap();
        assert_eq!(t.shape.len(), spec.shape.len(), "{}", spec.name);
        assert_eq!(t.data.len(), t.shape.iter().product::<usize>());
    }
    assert_eq!(INTERFACE.head.columns.len(), INTERFACE.head.width);
}
